// history.csv, curves.svg and run.json: what a training run leaves beside its checkpoint.
#include "train/run_files.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <sstream>

#include "runtime/file_bytes.h"
#include "train/run_metrics.h"

namespace switchyard::detail {
namespace {

using Column = std::pair<std::string, std::function<double(const EpochMetrics&)>>;

std::vector<Column> columns_of(const std::vector<EpochMetrics>& history) {
  const bool regression = !history.empty() && history.front().regression;
  const bool validation = std::any_of(history.begin(), history.end(),
                                      [](const EpochMetrics& m) { return m.has_validation; });
  std::vector<Column> columns = {
      {"epoch", [](const EpochMetrics& m) { return static_cast<double>(m.epoch); }},
      {"train_loss", [](const EpochMetrics& m) { return m.train_loss; }}};
  if (!regression) {
    columns.emplace_back("train_accuracy", [](const EpochMetrics& m) { return m.train_accuracy; });
  }
  if (validation) {
    columns.emplace_back("val_loss", [](const EpochMetrics& m) { return m.validation_loss; });
    if (regression) {
      columns.emplace_back("val_rmse",
                           [](const EpochMetrics& m) { return m.validation_values.rmse; });
      columns.emplace_back("val_mae",
                           [](const EpochMetrics& m) { return m.validation_values.mae; });
      columns.emplace_back("val_r2", [](const EpochMetrics& m) { return m.validation_values.r2; });
    } else {
      columns.emplace_back("val_accuracy",
                           [](const EpochMetrics& m) { return m.validation_accuracy; });
      columns.emplace_back("val_f1_macro",
                           [](const EpochMetrics& m) { return m.validation_f1_macro; });
    }
  }
  columns.emplace_back("test_loss", [](const EpochMetrics& m) { return m.test_loss; });
  if (regression) {
    columns.emplace_back("test_rmse", [](const EpochMetrics& m) { return m.test_values.rmse; });
    columns.emplace_back("test_mae", [](const EpochMetrics& m) { return m.test_values.mae; });
    columns.emplace_back("test_r2", [](const EpochMetrics& m) { return m.test_values.r2; });
  } else {
    columns.emplace_back("test_accuracy", [](const EpochMetrics& m) { return m.test_accuracy; });
  }
  columns.emplace_back("learning_rate", [](const EpochMetrics& m) { return m.learning_rate; });
  columns.emplace_back("epoch_seconds", [](const EpochMetrics& m) { return m.epoch_seconds; });
  return columns;
}

std::string number_text(double value, int digits) {
  if (!std::isfinite(value)) return "nan";
  char text[40];
  std::snprintf(text, sizeof(text), "%.*g", digits, value);
  return text;
}

std::string xml_escaped(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        // Control characters are not allowed in XML 1.0 text.
        out += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
    }
  }
  return out;
}

// One line of a panel: its legend name, colour and one value per epoch (NaN: no point).
struct Series {
  std::string id;
  std::string name;
  std::string color;
  std::vector<double> values;
};

struct Panel {
  std::string title;
  std::string y_label;
  std::vector<Series> series;
};

// A step of 1, 2 or 5 times a power of ten that cuts `range` into about `count` parts.
double nice_step(double range, int count) {
  const double raw = range / count;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / magnitude;
  return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * magnitude;
}

struct Axis {
  double low = 0;
  double high = 1;
  double step = 0.2;
};

Axis value_axis(const std::vector<Series>& series) {
  double low = INFINITY;
  double high = -INFINITY;
  for (const Series& s : series) {
    for (const double v : s.values) {
      if (!std::isfinite(v)) continue;
      low = std::min(low, v);
      high = std::max(high, v);
    }
  }
  if (!std::isfinite(low)) return {};
  if (high - low < 1e-12 * std::max(1.0, std::fabs(high))) {
    const double pad = std::fabs(high) > 0 ? std::fabs(high) * 0.1 : 0.5;
    low -= pad;
    high += pad;
  }
  Axis axis;
  axis.step = nice_step(high - low, 5);
  axis.low = std::floor(low / axis.step) * axis.step;
  axis.high = std::ceil(high / axis.step) * axis.step;
  return axis;
}

constexpr double kPanelWidth = 480;
constexpr double kHeight = 380;
constexpr double kLeft = 64;
constexpr double kRight = 16;
constexpr double kTop = 66;
constexpr double kBottom = 52;

void draw_panel(std::ostringstream& svg, const Panel& panel, const std::vector<double>& epochs,
                double x0) {
  const double left = x0 + kLeft;
  const double right = x0 + kPanelWidth - kRight;
  const double top = kTop;
  const double bottom = kHeight - kBottom;
  const double first = epochs.front();
  const double last = epochs.back();
  const double x_low = first == last ? first - 1 : first;
  const double x_high = first == last ? last + 1 : last;
  const Axis y = value_axis(panel.series);
  const auto px = [&](double epoch) {
    return left + (epoch - x_low) / (x_high - x_low) * (right - left);
  };
  const auto py = [&](double v) {
    return bottom - (v - y.low) / (y.high - y.low) * (bottom - top);
  };
  svg << "<g class=\"panel\">\n"
      << "<text x=\"" << (left + right) / 2 << "\" y=\"" << top - 26
      << "\" text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\">"
      << xml_escaped(panel.title) << "</text>\n"
      << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << right - left << "\" height=\""
      << bottom - top << "\" fill=\"none\" stroke=\"#444\"/>\n";
  // y ticks and grid lines.
  for (double v = y.low; v <= y.high + y.step * 1e-6; v += y.step) {
    const double at = py(v);
    svg << "<line x1=\"" << left - 4 << "\" y1=\"" << at << "\" x2=\"" << right << "\" y2=\"" << at
        << "\" stroke=\"#ddd\"/>\n<text x=\"" << left - 6 << "\" y=\"" << at + 4
        << "\" text-anchor=\"end\" font-size=\"11\">"
        << number_text(std::fabs(v) < y.step * 1e-6 ? 0.0 : v, 4) << "</text>\n";
  }
  // x ticks at whole epochs.
  const double x_step = std::max(1.0, std::round(nice_step(x_high - x_low, 8)));
  for (double e = std::ceil(x_low / x_step) * x_step; e <= x_high + 1e-9; e += x_step) {
    if (e < x_low) continue;
    const double at = px(e);
    svg << "<line x1=\"" << at << "\" y1=\"" << bottom << "\" x2=\"" << at << "\" y2=\""
        << bottom + 4 << "\" stroke=\"#444\"/>\n<text x=\"" << at << "\" y=\"" << bottom + 16
        << "\" text-anchor=\"middle\" font-size=\"11\">" << number_text(e, 6) << "</text>\n";
  }
  svg << "<text x=\"" << (left + right) / 2 << "\" y=\"" << kHeight - 14
      << "\" text-anchor=\"middle\" font-size=\"12\">epoch</text>\n"
      << "<text x=\"" << x0 + 16 << "\" y=\"" << (top + bottom) / 2
      << "\" text-anchor=\"middle\" font-size=\"12\" transform=\"rotate(-90 " << x0 + 16 << " "
      << (top + bottom) / 2 << ")\">" << xml_escaped(panel.y_label) << "</text>\n";
  for (const Series& s : panel.series) {
    std::ostringstream points;
    int count = 0;
    for (size_t i = 0; i < epochs.size(); ++i) {
      if (!std::isfinite(s.values[i])) continue;
      points << (count++ > 0 ? " " : "") << number_text(px(epochs[i]), 6) << ","
             << number_text(py(s.values[i]), 6);
    }
    svg << "<polyline class=\"series\" id=\"" << s.id << "\" fill=\"none\" stroke=\"" << s.color
        << "\" stroke-width=\"2\" points=\"" << points.str() << "\"><title>" << xml_escaped(s.name)
        << "</title></polyline>\n";
    // Points of short runs, so that a single epoch shows.
    if (epochs.size() > 30) continue;
    for (size_t i = 0; i < epochs.size(); ++i) {
      if (!std::isfinite(s.values[i])) continue;
      svg << "<circle cx=\"" << number_text(px(epochs[i]), 6) << "\" cy=\""
          << number_text(py(s.values[i]), 6) << "\" r=\"2.5\" fill=\"" << s.color << "\"/>\n";
    }
  }
  // The legend, at the top of the panel.
  double legend_x = left;
  for (const Series& s : panel.series) {
    svg << "<line x1=\"" << legend_x << "\" y1=\"" << top - 8 << "\" x2=\"" << legend_x + 18
        << "\" y2=\"" << top - 8 << "\" stroke=\"" << s.color << "\" stroke-width=\"2\"/>\n"
        << "<text x=\"" << legend_x + 22 << "\" y=\"" << top - 4 << "\" font-size=\"11\">"
        << xml_escaped(s.name) << "</text>\n";
    legend_x += 30 + 7.0 * static_cast<double>(s.name.size());
  }
  svg << "</g>\n";
}

std::vector<double> values_of(const std::vector<EpochMetrics>& history,
                              const std::function<double(const EpochMetrics&)>& value) {
  std::vector<double> out;
  out.reserve(history.size());
  for (const EpochMetrics& m : history) out.push_back(value(m));
  return out;
}

std::vector<Panel> panels_of(const std::vector<EpochMetrics>& history) {
  const bool regression = history.front().regression;
  const bool validation = std::any_of(history.begin(), history.end(),
                                      [](const EpochMetrics& m) { return m.has_validation; });
  // The held-out series: validation when the run has that split, else the test split.
  const std::string held = validation ? "validation" : "test";
  const std::string held_id = validation ? "val" : "test";
  const char* kTrainColor = "#1f77b4";
  const char* kHeldColor = "#d62728";
  Panel loss{"loss per epoch", "loss", {}};
  loss.series.push_back({"loss-train", "train", kTrainColor,
                         values_of(history, [](const EpochMetrics& m) { return m.train_loss; })});
  loss.series.push_back(
      {"loss-" + held_id, held, kHeldColor, values_of(history, [validation](const EpochMetrics& m) {
         return validation ? m.validation_loss : m.test_loss;
       })});
  Panel metric;
  if (regression) {
    // The trainer measures RMSE on the evaluated splits only, not on the training batches.
    metric = {"RMSE per epoch (targets' units)", "rmse", {}};
    metric.series.push_back({"rmse-" + held_id, held, kHeldColor,
                             values_of(history, [validation](const EpochMetrics& m) {
                               return validation ? m.validation_values.rmse : m.test_values.rmse;
                             })});
  } else {
    metric = {"accuracy per epoch", "accuracy", {}};
    metric.series.push_back(
        {"accuracy-train", "train", kTrainColor,
         values_of(history, [](const EpochMetrics& m) { return m.train_accuracy; })});
    metric.series.push_back({"accuracy-" + held_id, held, kHeldColor,
                             values_of(history, [validation](const EpochMetrics& m) {
                               return validation ? m.validation_accuracy : m.test_accuracy;
                             })});
  }
  return {loss, metric};
}

Json best_and_final(const std::vector<EpochMetrics>& history, const std::string& column,
                    bool lower_is_better) {
  const std::vector<Column> columns = columns_of(history);
  const auto found = std::find_if(columns.begin(), columns.end(),
                                  [&](const Column& c) { return c.first == column; });
  if (found == columns.end() || history.empty()) return nullptr;
  const EpochMetrics* best = nullptr;
  for (const EpochMetrics& m : history) {
    const double v = found->second(m);
    if (!std::isfinite(v)) continue;
    if (best == nullptr || (lower_is_better ? v < found->second(*best) : v > found->second(*best)))
      best = &m;
  }
  Json out{{"final", found->second(history.back())}};
  if (best != nullptr) {
    out["best"] = found->second(*best);
    out["best_epoch"] = best->epoch;
  }
  return out;
}

}  // namespace

std::vector<std::string> history_columns(const std::vector<EpochMetrics>& history) {
  std::vector<std::string> names;
  for (const Column& column : columns_of(history)) names.push_back(column.first);
  return names;
}

std::string history_csv_text(const std::vector<EpochMetrics>& history) {
  const std::vector<Column> columns = columns_of(history);
  std::string text;
  for (size_t c = 0; c < columns.size(); ++c) text += (c ? "," : "") + columns[c].first;
  text += "\n";
  for (const EpochMetrics& m : history) {
    for (size_t c = 0; c < columns.size(); ++c) {
      text += (c ? "," : "") + number_text(columns[c].second(m), 9);
    }
    text += "\n";
  }
  return text;
}

std::string curves_svg_text(const std::vector<EpochMetrics>& history, const std::string& title) {
  const double width = 2 * kPanelWidth;
  std::ostringstream svg;
  svg << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" << width
      << "\" height=\"" << kHeight << "\" viewBox=\"0 0 " << width << " " << kHeight
      << "\" font-family=\"sans-serif\">\n"
      << "<title>" << xml_escaped(title) << "</title>\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"8\" y=\"16\" font-size=\"12\" fill=\"#555\">" << xml_escaped(title)
      << "</text>\n";
  if (history.empty()) {
    svg << "<text x=\"" << width / 2 << "\" y=\"" << kHeight / 2
        << "\" text-anchor=\"middle\" font-size=\"14\">no epoch has run yet</text>\n</svg>\n";
    return svg.str();
  }
  const std::vector<double> epochs =
      values_of(history, [](const EpochMetrics& m) { return static_cast<double>(m.epoch); });
  const std::vector<Panel> panels = panels_of(history);
  for (size_t p = 0; p < panels.size(); ++p) {
    draw_panel(svg, panels[p], epochs, static_cast<double>(p) * kPanelWidth);
  }
  svg << "</svg>\n";
  return svg.str();
}

Status write_history_files(const std::filesystem::path& folder,
                           const std::vector<EpochMetrics>& history, const std::string& title) {
  const std::string csv = history_csv_text(history);
  SY_RETURN_IF_ERROR(write_file_atomically(
      folder / kHistoryCsvName, std::vector<uint8_t>(csv.begin(), csv.end()), "history"));
  const std::string svg = curves_svg_text(history, title);
  return write_file_atomically(folder / kCurvesSvgName,
                               std::vector<uint8_t>(svg.begin(), svg.end()), "curves");
}

StopReason stop_reason(const TrainSummary& summary, const TrainSettings& settings) {
  if (summary.monitor.stopped_early) return {"early_stopping", summary.monitor.stop_message};
  if (summary.stopped_by_callback) {
    return {"callback",
            "a callback stopped the run after epoch " +
                std::to_string(summary.history.empty() ? 0 : summary.history.back().epoch)};
  }
  return {"epochs", "every epoch of train.epochs ran (" +
                        (settings.epochs_auto ? "auto: " : std::string()) +
                        std::to_string(settings.epochs) + ")"};
}

Json run_record_json(const TrainSummary& summary, const TrainSettings& settings,
                     const std::string& config_file) {
  const RunInfo& info = summary.info;
  const std::vector<EpochMetrics>& history = summary.history;
  const StopReason stop = stop_reason(summary, settings);
  Json record{{"format", kRunRecordFormat},
              {"config", config_file},
              {"backend", info.backend},
              {"device", info.device_id},
              {"device_name", info.device_name},
              {"architecture", info.architecture},
              {"parameters", info.parameter_count},
              {"task", summary.target_names.empty() ? "classification" : "regression"},
              {"samples", Json{{"train", info.train_samples},
                               {"validation", info.validation_samples},
                               {"test", info.test_samples}}},
              {"epochs", history.empty() ? 0 : history.back().epoch},
              {"planned_epochs", settings.epochs},
              {"first_epoch", info.first_epoch},
              {"resumed_from", info.resumed_from},
              {"stop", Json{{"reason", stop.kind}, {"message", stop.message}}},
              {"warnings", summary.warnings}};
  Json curves = Json::object();
  for (const std::string& column : history_columns(history)) {
    if (column == "epoch" || column == "learning_rate" || column == "epoch_seconds") continue;
    const bool lower = column.find("loss") != std::string::npos ||
                       column.find("rmse") != std::string::npos ||
                       column.find("mae") != std::string::npos;
    curves[column] = best_and_final(history, column, lower);
  }
  record["history"] = std::move(curves);
  Json final_metrics = Json::object();
  add_final_metrics(final_metrics, summary, settings);
  record["final"] = std::move(final_metrics);
  record["checkpoint"] = summary.last_checkpoint;
  record["best_checkpoint"] = summary.monitor.best_checkpoint;
  record["exported"] = summary.exported_weights;
  record["history_csv"] = kHistoryCsvName;
  record["curves_svg"] = kCurvesSvgName;
  return record;
}

}  // namespace switchyard::detail
