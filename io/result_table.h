// Results people compare: one table, printed as aligned text, CSV or JSON with the same fields.
#pragma once

#include <ostream>
#include <string>
#include <variant>
#include <vector>

namespace rtm {

class ResultTable {
public:
  using Cell = std::variant<std::string, double, long long>;

  // Columns with a printf-style format for doubles in the text table (e.g. "%.1f").
  struct Column {
    std::string name;
    std::string format = "%.4g";
  };

  explicit ResultTable(std::vector<Column> columns);
  void add_row(std::vector<Cell> row); // must have one cell per column
  size_t rows() const { return rows_.size(); }

  void print_text(std::ostream& out) const; // aligned, header underlined
  void print_csv(std::ostream& out) const;  // header line, then rows; full precision
  void print_json(std::ostream& out) const; // array of objects keyed by column name

private:
  std::vector<Column> columns_;
  std::vector<std::vector<Cell>> rows_;
};

enum class OutputFormat { text, csv, json };
void print_table(std::ostream& out, const ResultTable& table, OutputFormat format);

} // namespace rtm
