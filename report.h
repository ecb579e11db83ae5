/*
 report.h: what a run tells a person and a program: exact-match counts by length, the aligned
 accuracy table, results.json and an SVG plot of accuracy against length; and the SVG plot frame
 (SvgPlot) that this plot and the sweep report's plots (dev/report.cpp) share.

 Accuracy is exact match of the whole target and <eos> (with a scratchpad, of the answer after
 its "Thus,"; the scratchpads and the tokens are tallied apart). A split's accuracy is the mean over its
 examples (the paper's "overall"); where every length has the same number of examples, that is
 also the mean over lengths.
*/
#pragma once

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common.h"

struct Tally {
    int64_t correct = 0, total = 0;  // tokens too: a large test split's count passes 2^31
    double accuracy() const { return total ? (double)correct / total : 0.0; }
};

struct SplitResult {
    std::map<int, Tally> by_length;  // λ -> right and all: answers, or scratchpads or tokens
    Tally all;

    void add(int length, bool correct) {
        by_length[length].correct += correct, by_length[length].total++;
        all.correct += correct, all.total++;
    }
};

// the table a person reads: one row per length, ID (valid) and OOD (test) side by side
inline void print_accuracy_table(FILE* out, const SplitResult& valid, const SplitResult& test) {
    fprintf(out, "%8s %12s %12s\n", "length", "valid (ID)", "test (OOD)");
    std::set<int> lengths;
    for (const auto& kv : valid.by_length) lengths.insert(kv.first);
    for (const auto& kv : test.by_length) lengths.insert(kv.first);
    for (int length : lengths) {
        auto cell = [&](const SplitResult& r) {
            auto it = r.by_length.find(length);
            return it == r.by_length.end() ? std::string("-") : format_text("%.3f", it->second.accuracy());  // rounded, as the mean
        };
        fprintf(out, "%8d %12s %12s\n", length, cell(valid).c_str(), cell(test).c_str());
    }
    fprintf(out, "%8s %12.3f %12.3f\n", "mean", valid.all.accuracy(), test.all.accuracy());
}

inline std::string json_split(const SplitResult& r) {
    std::string s = "{\"accuracy\": " + std::to_string(r.all.accuracy()) + ", \"correct\": " + std::to_string(r.all.correct) +
                    ", \"total\": " + std::to_string(r.all.total) + ", \"by_length\": [";
    for (const auto& kv : r.by_length)
        s += (kv.first == r.by_length.begin()->first ? "" : ", ") + std::string("{\"length\": ") + std::to_string(kv.first) +
             ", \"correct\": " + std::to_string(kv.second.correct) + ", \"total\": " + std::to_string(kv.second.total) +
             ", \"accuracy\": " + std::to_string(kv.second.accuracy()) + "}";
    return s + "]}";
}

// ----------------------------------------------------------------------------
// SVG plots. Every plot here shares one frame (SvgPlot): a white canvas, a title, a plot area
// whose y axis is a fraction from 0 to 1 (accuracy, MRR) with a grid, axis titles, and a
// legend in the right margin, outside the data. ./train's accuracy.svg and dev/report's plots
// are all drawn with it.

// matplotlib's "tab10" colours: series k always gets colour k, so a PE keeps its colour
inline const char* plot_color(int k) {
    static const char* const TAB10[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                        "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
    return TAB10[k % 10];
}

inline std::string xml_escape(const std::string& text) {
    std::string out;
    for (char ch : text) out += ch == '&' ? "&amp;" : ch == '<' ? "&lt;" : ch == '>' ? "&gt;" : ch == '"' ? "&quot;" : std::string(1, ch);
    return out;
}

struct LegendEntry {
    std::string label;
    const char* color;  // nullptr: a line of explanation in grey, without a swatch
    bool band = false;  // a shaded region (a filled square), not a line
};

struct SvgPlot {
    double width = 720, height = 420, left = 70, top = 44, bottom = 58;
    double right;        // wide enough for the legend when there is one
    double x_lo, x_hi;   // the data range across the plot area
    double y_hi = 1;     // the value at the top of the plot area (the bottom is 0)
    std::string svg;

    SvgPlot(double x_lo, double x_hi, const std::string& title, bool with_legend = true)
        : right(with_legend ? 190 : 24), x_lo(x_lo), x_hi(x_hi) {
        add("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" font-family=\"sans-serif\" font-size=\"12\">\n", width, height);
        add("<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
        add("<text x=\"%g\" y=\"26\" font-size=\"15\">%s</text>\n", left, xml_escape(title).c_str());
    }

    double x(double value) const { return left + (x_hi == x_lo ? 0.5 : (value - x_lo) / (x_hi - x_lo)) * (width - left - right); }
    double y(double value) const { return top + (1 - value / y_hi) * (height - top - bottom); }

    // printf-style: appends to the document
    void add(const char* format, ...) {
        va_list args;
        va_start(args, format);
        svg += vformat(format, args);
        va_end(args);
    }

    // horizontal grid lines with their labels at 0, y_hi/4, ..., y_hi
    void y_grid() {
        for (int k = 0; k <= 4; k++)
            add("<line x1=\"%g\" x2=\"%g\" y1=\"%g\" y2=\"%g\" stroke=\"#ddd\"/><text x=\"%g\" y=\"%g\" text-anchor=\"end\">%.3g</text>\n",
                left, width - right, y(k * y_hi / 4), y(k * y_hi / 4), left - 6, y(k * y_hi / 4) + 4, k * y_hi / 4);
    }

    // integer labels with tick marks below the plot area, at the multiples of a round step (1, 2,
    // 5, 10, 20, 50, ...) in lo..hi: at most about ten, however far apart lo and hi are
    void x_ticks(int lo, int hi) {
        static const int MANTISSAS[] = {1, 2, 5};
        long long span = (long long)hi - lo, step = 1;
        for (long long decade = 1; step * 10 < span; decade *= 10)
            for (int m : MANTISSAS)
                if ((step = m * decade) * 10 >= span) break;
        long long first = lo >= 0 ? (lo + step - 1) / step * step : -(-(long long)lo / step * step);
        for (long long n = first; n <= hi; n += step)
            add("<line x1=\"%g\" x2=\"%g\" y1=\"%g\" y2=\"%g\" stroke=\"#888\"/><text x=\"%g\" y=\"%g\" text-anchor=\"middle\">%lld</text>\n",
                x(n), x(n), y(0), y(0) + 4, x(n), y(0) + 18, n);
    }

    void axis_titles(const std::string& x_title, const std::string& y_title) {
        add("<line x1=\"%g\" x2=\"%g\" y1=\"%g\" y2=\"%g\" stroke=\"#888\"/>\n", left, width - right, y(0), y(0));
        add("<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">%s</text>\n", (left + width - right) / 2, height - 14, xml_escape(x_title).c_str());
        add("<text transform=\"translate(%g %g) rotate(-90)\" text-anchor=\"middle\">%s</text>\n", 18.0, (y(0) + y(y_hi)) / 2,
            xml_escape(y_title).c_str());
    }

    // a light band over the plot's whole height, from data x0 to x1 as far as the plot reaches
    // (drawn first, under the data); none where that leaves nothing (an SVG width is never negative)
    void band(double x0, double x1) {
        x0 = std::max(x0, x_lo), x1 = std::min(x1, x_hi);
        if (x1 <= x0) return;
        add("<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" fill=\"#000\" fill-opacity=\"0.07\"/>\n", x(x0), y(y_hi), x(x1) - x(x0), y(0) - y(y_hi));
    }

    void line(const std::vector<std::pair<double, double>>& points, const char* color) {
        std::string coords;
        char buf[64];
        for (const auto& p : points) {
            snprintf(buf, sizeof(buf), "%.1f,%.1f ", x(p.first), y(p.second));
            coords += buf;
        }
        add("<polyline fill=\"none\" stroke-width=\"2\" stroke-linejoin=\"round\" stroke=\"%s\" points=\"%s\"/>\n", color, coords.c_str());
    }

    // one faint dot per point: individual runs behind a line of their mean
    void dots(const std::vector<std::pair<double, double>>& points, const char* color) {
        for (const auto& p : points)
            add("<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\" fill-opacity=\"0.3\"/>\n", x(p.first), y(p.second), color);
    }

    void legend(const std::vector<LegendEntry>& entries) {
        double x0 = width - right + 16, y0 = y(y_hi) + 6;
        for (size_t k = 0; k < entries.size(); k++) {
            double row = y0 + 20 * k;
            if (!entries[k].color) {  // a note, not a series
                add("<text x=\"%g\" y=\"%g\" fill=\"#666\">%s</text>\n", x0, row + 4, xml_escape(entries[k].label).c_str());
                continue;
            }
            if (entries[k].band)
                add("<rect x=\"%g\" y=\"%g\" width=\"22\" height=\"12\" fill=\"#000\" fill-opacity=\"0.07\" stroke=\"#bbb\"/>\n", x0, row - 6);
            else
                add("<line x1=\"%g\" x2=\"%g\" y1=\"%g\" y2=\"%g\" stroke-width=\"2\" stroke=\"%s\"/>\n", x0, x0 + 22, row, row, entries[k].color);
            add("<text x=\"%g\" y=\"%g\">%s</text>\n", x0 + 30, row + 4, xml_escape(entries[k].label).c_str());
        }
    }

    std::string finish() const { return svg + "</svg>\n"; }
};

// the lengths a plot of accuracy against length spans: [lo, hi] over all the given splits
inline std::pair<int, int> length_range(const std::vector<const SplitResult*>& results) {
    int lo = INT32_MAX, hi = INT32_MIN;
    for (const SplitResult* r : results)
        for (const auto& kv : r->by_length) lo = std::min(lo, kv.first), hi = std::max(hi, kv.first);
    return lo > hi ? std::make_pair(0, 0) : std::make_pair(lo, hi);
}

// the frame of a plot of accuracy against length: lengths lo..hi, training lengths shaded
inline SvgPlot accuracy_plot(int lo, int hi, int train_max, const std::string& title) {
    SvgPlot plot(lo - 0.5, hi + 0.5, title);
    plot.band(lo - 0.5, train_max + 0.5);
    plot.y_grid();
    plot.x_ticks(lo, hi);
    plot.axis_titles("length (λ)", "exact-match accuracy");
    return plot;
}

inline std::vector<std::pair<double, double>> accuracy_points(const SplitResult& r) {
    std::vector<std::pair<double, double>> points;
    for (const auto& kv : r.by_length) points.push_back({kv.first, kv.second.accuracy()});
    return points;
}

// a run's accuracy against length: ID (valid) and OOD (test) as two lines, training lengths shaded
inline std::string accuracy_svg(const SplitResult& valid, const SplitResult& test, int train_max, const std::string& title) {
    std::pair<int, int> range = length_range({&valid, &test});
    SvgPlot plot = accuracy_plot(range.first, range.second, train_max, title);
    plot.line(accuracy_points(valid), plot_color(0));
    plot.line(accuracy_points(test), plot_color(1));
    plot.legend({{"valid (in distribution)", plot_color(0)}, {"test (longer)", plot_color(1)},
                 {"training lengths", "#000", true}});
    return plot.finish();
}
