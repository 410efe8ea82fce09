#!/usr/bin/env bash
# Runs the commands of a documentation page's walkthrough block (the indented lines between
# "<!-- walkthrough begin -->" and "<!-- walkthrough end -->"), exactly as written, in an empty
# directory, with the given rtm first on the PATH; fails on the first command that fails.
#   docs_walkthrough.sh PAGE.md RTM_EXECUTABLE WORK_DIR
set -euo pipefail
page=$1 rtm=$2 work=$3
commands=$(sed -n '/<!-- walkthrough begin -->/,/<!-- walkthrough end -->/p' "$page" |
           grep '^    ' | sed 's/^    //')
if [ -z "$commands" ]; then
  echo "$page: no walkthrough block" >&2
  exit 1
fi
rm -rf "$work"
mkdir -p "$work/bin"
ln -s "$rtm" "$work/bin/rtm"
cd "$work"
export PATH="$work/bin:$PATH"
while IFS= read -r line; do
  case "$line" in '#'*|'') continue ;; esac
  echo "+ $line"
  bash -c "$line"
done <<< "$commands"
echo "every command of the walkthrough in $page ran"
