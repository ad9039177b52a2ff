// switchyard report RUN_DIR: the summary of a training run from the files it left beside its
// checkpoint (run.json and history.csv; train/run_files.h). Reads nothing else, loads no plugin.
//
// Exit codes: 0 printed, 2 bad arguments or a run folder that is missing, incomplete or damaged
// (the message names the file).
#include <cmath>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

#include "cli_common.h"
#include "runtime/input_file.h"
#include "support/json_io.h"
#include "train/run_files.h"

namespace switchyard::cli {
namespace {

using detail::Json;

constexpr const char* kUsage =
    "usage: switchyard report RUN_DIR\n\n"
    "Prints the summary of the training run whose files are in RUN_DIR (the folder of its\n"
    "checkpoint, runs/<config name>/ by default): configuration, device, rows per split, epochs\n"
    "and why the run stopped, the best and final loss and metrics of every split, the test\n"
    "figures of the final weights, and where the checkpoint and the curves are. It reads\n"
    "RUN_DIR/run.json and RUN_DIR/history.csv, which every training run writes.";

// history.csv as columns of numbers, checked: a header, then rows of as many numbers.
struct History {
  std::vector<std::string> columns;
  std::vector<std::vector<double>> rows;

  int column(const std::string& name) const {
    for (size_t c = 0; c < columns.size(); ++c) {
      if (columns[c] == name) return static_cast<int>(c);
    }
    return -1;
  }
};

std::vector<std::string> split_fields(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream stream(line);
  std::string field;
  while (std::getline(stream, field, ',')) fields.push_back(field);
  if (!line.empty() && line.back() == ',') fields.emplace_back();
  return fields;
}

Result<History> read_history(const std::filesystem::path& path) {
  SY_ASSIGN_OR_RETURN(const std::string text, detail::read_input_text(path, "run history"));
  const std::string name = path.string();
  History history;
  std::stringstream lines(text);
  std::string line;
  int64_t number = 0;
  while (std::getline(lines, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::vector<std::string> fields = split_fields(line);
    if (number == 1) {
      if (fields.empty() || fields.front() != "epoch") {
        return data_loss(name + ":1: not a run history: the header must start with 'epoch' (got '" +
                         detail::printable_text(line.substr(0, detail::kQuoteLimit)) + "')");
      }
      history.columns = fields;
      continue;
    }
    if (fields.size() != history.columns.size()) {
      return data_loss(name + ":" + std::to_string(number) + ": " + std::to_string(fields.size()) +
                       " fields, the header has " + std::to_string(history.columns.size()));
    }
    std::vector<double> row;
    for (size_t c = 0; c < fields.size(); ++c) {
      char* end = nullptr;
      const double value = std::strtod(fields[c].c_str(), &end);
      if (fields[c].empty() || end != fields[c].c_str() + fields[c].size()) {
        return data_loss(name + ":" + std::to_string(number) + ":" + std::to_string(c + 1) + ": '" +
                         detail::printable_text(fields[c].substr(0, detail::kQuoteLimit)) +
                         "' is not a number (column '" + history.columns[c] + "')");
      }
      row.push_back(value);
    }
    history.rows.push_back(std::move(row));
  }
  if (history.columns.empty()) return data_loss(name + ": empty; a run history has a header");
  return history;
}

Result<Json> read_record(const std::filesystem::path& path) {
  SY_ASSIGN_OR_RETURN(const std::string text, detail::read_input_text(path, "run record"));
  Json record;
  try {
    record = detail::parse_strict_json(text);
  } catch (const std::exception& error) {
    return data_loss(path.string() + ": not a run record (malformed JSON: " + error.what() + ")");
  }
  if (!record.is_object() || record.value("format", Json()) != detail::kRunRecordFormat) {
    return data_loss(path.string() + ": not a run record (no \"format\": \"" +
                     std::string(detail::kRunRecordFormat) + "\")");
  }
  for (const char* member : {"config", "backend", "device", "samples", "epochs", "stop", "final"}) {
    if (!record.contains(member)) {
      return data_loss(path.string() + ": the run record lacks '" + member + "'");
    }
  }
  return record;
}

std::string number(double value) {
  if (!std::isfinite(value)) return "nan";
  std::ostringstream text;
  text << std::setprecision(4) << value;
  return text.str();
}

std::string text_of(const Json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number()) return number(value.get<double>());
  return value.dump();
}

bool lower_is_better(const std::string& column) {
  return column.find("loss") != std::string::npos || column.find("rmse") != std::string::npos ||
         column.find("mae") != std::string::npos;
}

// One line per measured column: its best value (and epoch) and its final value.
void print_history_table(std::ostream& out, const History& history) {
  out << "\n"
      << std::left << std::setw(18) << "per epoch" << std::setw(22) << "best (epoch)"
      << "final\n";
  for (size_t c = 1; c < history.columns.size(); ++c) {
    const std::string& name = history.columns[c];
    if (name == "learning_rate" || name == "epoch_seconds") continue;
    const bool lower = lower_is_better(name);
    size_t best = history.rows.size();
    for (size_t r = 0; r < history.rows.size(); ++r) {
      const double v = history.rows[r][c];
      if (!std::isfinite(v)) continue;
      if (best == history.rows.size() ||
          (lower ? v < history.rows[best][c] : v > history.rows[best][c])) {
        best = r;
      }
    }
    const std::string best_text =
        best == history.rows.size()
            ? "-"
            : number(history.rows[best][c]) + " (" + number(history.rows[best][0]) + ")";
    out << std::setw(18) << name << std::setw(22) << best_text << number(history.rows.back()[c])
        << "\n";
  }
}

void print_final(std::ostream& out, const Json& final_metrics) {
  for (const char* split : {"test", "val"}) {
    const std::string prefix = split;
    if (!final_metrics.contains(prefix + "_loss")) continue;
    out << (prefix == "val" ? "validation" : "test") << " (final weights): loss "
        << text_of(final_metrics[prefix + "_loss"]);
    for (const char* metric : {"accuracy", "rmse", "mae", "r2"}) {
      if (final_metrics.contains(prefix + "_" + metric)) {
        out << ", " << metric << " " << text_of(final_metrics[prefix + "_" + metric]);
      }
    }
    out << "\n";
  }
}

int report(const std::filesystem::path& folder) {
  std::error_code error;
  if (!std::filesystem::is_directory(folder, error)) {
    print_error(invalid_argument(
        "report: " + folder.string() +
        (std::filesystem::exists(folder, error)
             ? " is not a folder; give the folder of the run's checkpoint (runs/<config name>)"
             : " does not exist; give the folder of the run's checkpoint (runs/<config name>)")));
    return kExitUsage;
  }
  Result<Json> record = read_record(folder / detail::kRunRecordName);
  if (!record.ok()) {
    print_error(record.status().with_context("report"));
    return kExitUsage;
  }
  Result<History> history = read_history(folder / detail::kHistoryCsvName);
  if (!history.ok()) {
    print_error(history.status().with_context("report"));
    return kExitUsage;
  }
  const Json& r = *record;
  const std::string history_path = (folder / detail::kHistoryCsvName).string();
  const int64_t epochs = r["epochs"].get<int64_t>();
  if (history->rows.empty() ? epochs != 0
                            : static_cast<int64_t>(history->rows.back()[0]) != epochs) {
    print_error(data_loss("report: " + history_path + " ends at epoch " +
                          (history->rows.empty() ? "0" : number(history->rows.back()[0])) +
                          ", but " + (folder / detail::kRunRecordName).string() + " says " +
                          std::to_string(epochs) + " epochs ran"));
    return kExitUsage;
  }
  std::ostream& out = std::cout;
  const Json& samples = r["samples"];
  out << "run: " << folder.string() << "\n"
      << "config: " << text_of(r["config"]) << "\n"
      << "backend: " << text_of(r["backend"]) << "  device: " << text_of(r["device"]) << " ("
      << text_of(r.value("device_name", Json(""))) << ")\n"
      << "model: " << text_of(r.value("architecture", Json(""))) << " ("
      << r.value("parameters", Json(0)).dump() << " parameters, "
      << text_of(r.value("task", Json(""))) << ")\n"
      << "data: " << samples.value("train", Json(0)).dump() << " train, "
      << samples.value("validation", Json(0)).dump() << " validation, "
      << samples.value("test", Json(0)).dump() << " test rows\n"
      << "epochs: " << epochs << " of " << r.value("planned_epochs", Json(0)).dump()
      << "; stopped: " << text_of(r["stop"].value("message", Json(""))) << "\n";
  if (!text_of(r.value("resumed_from", Json(""))).empty()) {
    out << "resumed from: " << text_of(r["resumed_from"]) << "\n";
  }
  if (r.contains("warnings") && r["warnings"].is_array()) {
    for (const Json& warning : r["warnings"]) out << "warning: " << text_of(warning) << "\n";
  }
  if (!history->rows.empty()) print_history_table(out, *history);
  out << "\n";
  print_final(out, r["final"]);
  out << "\n";
  const auto path_line = [&](const char* label, const char* member) {
    const std::string value = text_of(r.value(member, Json("")));
    if (!value.empty()) out << label << value << "\n";
  };
  path_line("checkpoint: ", "checkpoint");
  path_line("best checkpoint: ", "best_checkpoint");
  path_line("exported: ", "exported");
  out << "curves: " << (folder / detail::kCurvesSvgName).string() << "\n"
      << "history: " << history_path << "\n";
  return kExitOk;
}

}  // namespace

int report_command(const Args& args) {
  po::options_description options("options");
  options.add_options()("run-dir", po::value<std::string>(), "the run's folder");
  po::positional_options_description positional;
  positional.add("run-dir", 1);
  po::variables_map values;
  if (auto exit = parse_args(args, kUsage, options, values, &positional)) return *exit;
  if (values.count("run-dir") == 0) {
    std::cerr << "switchyard: report needs a RUN_DIR\n\n" << kUsage << "\n";
    return kExitUsage;
  }
  try {
    return report(values["run-dir"].as<std::string>());
  } catch (const std::exception& error) {
    // A record whose members have other types than a run writes (nlohmann's type_error).
    print_error(data_loss("report: " + values["run-dir"].as<std::string>() + "/" +
                          detail::kRunRecordName + " is damaged: " + error.what()));
    return kExitUsage;
  }
}

}  // namespace switchyard::cli
