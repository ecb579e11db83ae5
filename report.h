/*
 report.h: what a run tells a person and a program: exact-match counts by length, the aligned
 accuracy table, results.json and an SVG plot of accuracy against length.

 Accuracy is exact match of the whole target and <eos>. A split's accuracy is the mean over its
 examples (the paper's "overall"); where every length has the same number of examples, that is
 also the mean over lengths.
*/
#pragma once

#include <map>
#include <string>

#include "common.h"

struct Tally {
    int correct = 0, total = 0;
    double accuracy() const { return total ? (double)correct / total : 0.0; }
};

struct SplitResult {
    std::map<int, Tally> by_length;  // λ -> exact matches
    Tally all;

    void add(int length, bool correct) {
        by_length[length].correct += correct, by_length[length].total++;
        all.correct += correct, all.total++;
    }
};

// the table a person reads: one row per length, ID (valid) and OOD (test) side by side
inline void print_accuracy_table(FILE* out, const SplitResult& valid, const SplitResult& test) {
    fprintf(out, "%8s %12s %12s\n", "length", "valid (ID)", "test (OOD)");
    std::map<int, int> lengths;
    for (const auto& kv : valid.by_length) lengths[kv.first] = 1;
    for (const auto& kv : test.by_length) lengths[kv.first] = 1;
    for (const auto& kv : lengths) {
        auto cell = [&](const SplitResult& r) {
            auto it = r.by_length.find(kv.first);
            return it == r.by_length.end() ? std::string("-") : std::to_string(it->second.accuracy()).substr(0, 5);
        };
        fprintf(out, "%8d %12s %12s\n", kv.first, cell(valid).c_str(), cell(test).c_str());
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

// accuracy against length: ID in blue, OOD in orange, a dashed line where training lengths end
inline std::string accuracy_svg(const SplitResult& valid, const SplitResult& test, int train_max, const std::string& title) {
    const double width = 640, height = 400, left = 60, right = 20, top = 40, bottom = 50;
    int lo = INT32_MAX, hi = INT32_MIN;
    for (const SplitResult* r : {&valid, &test})
        for (const auto& kv : r->by_length) lo = std::min(lo, kv.first), hi = std::max(hi, kv.first);
    if (lo > hi) lo = hi = 0;
    auto x = [&](double length) { return left + (hi == lo ? 0.5 : (length - lo) / (hi - lo)) * (width - left - right); };
    auto y = [&](double accuracy) { return top + (1 - accuracy) * (height - top - bottom); };
    char buf[256];
    std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"640\" height=\"400\" font-family=\"sans-serif\" font-size=\"12\">\n";
    svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
    snprintf(buf, sizeof(buf), "<text x=\"%g\" y=\"24\" font-size=\"15\">%s</text>\n", left, title.c_str());
    svg += buf;
    for (int k = 0; k <= 4; k++) {  // horizontal grid with accuracy labels
        snprintf(buf, sizeof(buf), "<line x1=\"%g\" x2=\"%g\" y1=\"%g\" y2=\"%g\" stroke=\"#ddd\"/><text x=\"%g\" y=\"%g\" text-anchor=\"end\">%.2f</text>\n",
                 left, width - right, y(k / 4.0), y(k / 4.0), left - 6, y(k / 4.0) + 4, k / 4.0);
        svg += buf;
    }
    int step = std::max(1, (hi - lo) / 10);
    for (int n = lo; n <= hi; n += step) {
        snprintf(buf, sizeof(buf), "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">%d</text>\n", x(n), height - bottom + 18, n);
        svg += buf;
    }
    snprintf(buf, sizeof(buf), "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">length</text>\n", (left + width - right) / 2, height - 12);
    svg += buf;
    snprintf(buf, sizeof(buf), "<line x1=\"%g\" x2=\"%g\" y1=\"%g\" y2=\"%g\" stroke=\"#888\" stroke-dasharray=\"4 4\"/>\n",
             x(train_max + 0.5), x(train_max + 0.5), top, height - bottom);
    svg += buf;
    const char* colors[] = {"#1f77b4", "#ff7f0e"};
    const char* names[] = {"valid (in distribution)", "test (longer)"};
    const SplitResult* results[] = {&valid, &test};
    for (int k = 0; k < 2; k++) {
        std::string points;
        for (const auto& kv : results[k]->by_length) {
            snprintf(buf, sizeof(buf), "%.1f,%.1f ", x(kv.first), y(kv.second.accuracy()));
            points += buf;
        }
        svg += "<polyline fill=\"none\" stroke-width=\"2\" stroke=\"" + std::string(colors[k]) + "\" points=\"" + points + "\"/>\n";
        snprintf(buf, sizeof(buf), "<text x=\"%g\" y=\"%g\" fill=\"%s\">%s</text>\n", width - right - 160, top + 16 + 16 * k, colors[k], names[k]);
        svg += buf;
    }
    return svg + "</svg>\n";
}
