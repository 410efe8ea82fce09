#include "io/result_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace rtm {
namespace {

std::string format_double(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

std::string text_cell(const ResultTable::Cell& cell, const ResultTable::Column& col) {
  if (const auto* s = std::get_if<std::string>(&cell)) return *s;
  if (const auto* i = std::get_if<long long>(&cell)) return std::to_string(*i);
  const double d = std::get<double>(cell);
  if (std::isnan(d)) return "-";
  return format_double(col.format.c_str(), d);
}

std::string csv_cell(const ResultTable::Cell& cell) {
  if (const auto* s = std::get_if<std::string>(&cell)) {
    if (s->find_first_of(",\"\n") == std::string::npos) return *s;
    std::string quoted = "\"";
    for (char c : *s) quoted += (c == '"') ? std::string("\"\"") : std::string(1, c);
    return quoted + "\"";
  }
  if (const auto* i = std::get_if<long long>(&cell)) return std::to_string(*i);
  const double d = std::get<double>(cell);
  return std::isnan(d) ? std::string() : format_double("%.9g", d);
}

} // namespace

ResultTable::ResultTable(std::vector<Column> columns) : columns_(std::move(columns)) {}

void ResultTable::add_row(std::vector<Cell> row) {
  if (row.size() != columns_.size())
    throw std::invalid_argument("ResultTable: row has " + std::to_string(row.size()) +
                                " cells, table has " + std::to_string(columns_.size()) + " columns");
  rows_.push_back(std::move(row));
}

void ResultTable::print_text(std::ostream& out) const {
  std::vector<size_t> width(columns_.size());
  std::vector<std::vector<std::string>> cells(rows_.size());
  for (size_t c = 0; c < columns_.size(); ++c) width[c] = columns_[c].name.size();
  for (size_t r = 0; r < rows_.size(); ++r)
    for (size_t c = 0; c < columns_.size(); ++c) {
      cells[r].push_back(text_cell(rows_[r][c], columns_[c]));
      width[c] = std::max(width[c], cells[r][c].size());
    }
  // Text columns align left, numbers right.
  auto is_text = [&](size_t c) {
    return !rows_.empty() && std::holds_alternative<std::string>(rows_[0][c]);
  };
  auto pad = [&](const std::string& s, size_t c) {
    const std::string fill(width[c] - s.size(), ' ');
    return is_text(c) ? s + fill : fill + s;
  };
  for (size_t c = 0; c < columns_.size(); ++c) out << (c ? "  " : "") << pad(columns_[c].name, c);
  out << '\n';
  for (size_t c = 0; c < columns_.size(); ++c) out << (c ? "  " : "") << std::string(width[c], '-');
  out << '\n';
  for (const auto& row : cells) {
    for (size_t c = 0; c < columns_.size(); ++c) out << (c ? "  " : "") << pad(row[c], c);
    out << '\n';
  }
}

void ResultTable::print_csv(std::ostream& out) const {
  for (size_t c = 0; c < columns_.size(); ++c) out << (c ? "," : "") << columns_[c].name;
  out << '\n';
  for (const auto& row : rows_) {
    for (size_t c = 0; c < columns_.size(); ++c) out << (c ? "," : "") << csv_cell(row[c]);
    out << '\n';
  }
}

void ResultTable::print_json(std::ostream& out) const {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : rows_) {
    nlohmann::json obj = nlohmann::json::object();
    for (size_t c = 0; c < columns_.size(); ++c) {
      const Cell& cell = row[c];
      if (const auto* s = std::get_if<std::string>(&cell)) obj[columns_[c].name] = *s;
      else if (const auto* i = std::get_if<long long>(&cell)) obj[columns_[c].name] = *i;
      else {
        const double d = std::get<double>(cell);
        obj[columns_[c].name] = std::isfinite(d) ? nlohmann::json(d) : nlohmann::json(nullptr);
      }
    }
    rows.push_back(std::move(obj));
  }
  out << rows.dump(2) << '\n';
}

void print_table(std::ostream& out, const ResultTable& table, OutputFormat format) {
  switch (format) {
  case OutputFormat::text: table.print_text(out); break;
  case OutputFormat::csv: table.print_csv(out); break;
  case OutputFormat::json: table.print_json(out); break;
  }
}

} // namespace rtm
