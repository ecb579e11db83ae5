/*
 dev/table_extend.cpp: an intervention on a trained model whose PE learns a table of rows by
 position (pe_position_rows in pe.h: ape_learned's positions, T5's buckets of distance, CoPE's
 contextual positions). From row FROM on, every row of the table (each layer's, with
 --pe-per-layer) takes the values of the row PERIOD before it, so that what training learned
 for the rows it reached repeats for the rows it never saw; the model is written as a new
 checkpoint for ./train --load to evaluate.

   make dev/table_extend && ./dev/table_extend RUN/model.bin FROM PERIOD OUT.bin
   ./train --load OUT.bin

 docs/beyond.md uses it on CoPE's parity models, whose learned rows alternate in sign (PERIOD 2)
 up to the counts training reached: if the longer strings fail because the rows their counts
 read learned nothing, continuing the alternation must mend them, and it does.
 dev/t5_clamp.sh uses it on T5's models (PERIOD 1: from a bucket on, every bucket takes the
 bias of the bucket before it), to find which buckets fail them at longer lengths.
*/
#ifndef TESTING  // built as a program: train.cu's code without its main (a test includes train.cu itself)
#define TESTING
#define TABLE_EXTEND_MAIN
#include "train.cu"
#endif
#include "dev/tool.h"


// rows from..rows-1 of every copy of the table take row - period's values, in order, so a row
// copied from may itself have been copied: the pattern of rows from-period..from-1 repeats
static void extend_table(Model* m, int from, int period) {
    const ModelConfig& c = m->config;
    int rows = pe_position_rows(c.pe, c.max_pos());
    size_t width = pe_param_count(c.pe, c.C, c.NH, c.max_pos()) / rows;
    if (period < 1 || from < period || from >= rows)
        fail("FROM %d and PERIOD %d must satisfy 1 <= PERIOD <= FROM < %d, the table's rows", from, period, rows);
    for (int copy = 0; copy < param_copies(c, P_PE_TABLE); copy++) {
        real* table = m->param(P_PE_TABLE, copy);
        for (int row = from; row < rows; row++)
            std::copy(table + (row - period) * width, table + (row - period + 1) * width, table + row * width);
    }
}

static void table_extend(const std::string& in, int from, int period, const std::string& out) {
    if (same_file(in, out)) fail("%s is the model read: write the edited model to a file of its own", out.c_str());
    RunConfig c;
    Run r(&c);
    r.quiet = true;  // the tool's own line says what it did
    Header h = load_run(&r, in);
    if (h[H_KIND] != CKPT_MODEL) fail("%s holds a training state: give a run's model.bin", in.c_str());
    int rows = pe_position_rows(r.model.config.pe, r.model.config.max_pos());
    if (rows == 0) fail("%s is a --pe %s model: only ape_learned, t5 and cope learn a table of rows by position to extend", in.c_str(), c.pe.c_str());
    extend_table(&r.model, from, period);
    save_checkpoint(out, r.model, h);
    auto span = [](int lo, int hi) { return lo == hi ? format_text("row %d", lo) : format_text("rows %d-%d", lo, hi); };
    int copied_hi = std::min(from - 1, rows - 1 - period);  // the last row a row after FROM copies
    printf("wrote %s: %s of the table repeat %s\n", out.c_str(), span(from, rows - 1).c_str(), span(from - period, copied_hi).c_str());
}

#ifdef TABLE_EXTEND_MAIN
// FROM and PERIOD, read as ./train reads an integer flag
static int int_argument(const char* name, const char* text) {
    int value = 0;
    parse_value(Flag{name, FLAG_INT, &value, false, ANY, ""}, text);
    return value;
}

int main(int argc, char** argv) {
    const char* usage = "dev/table_extend MODEL.bin FROM PERIOD OUT.bin\n"
                        "  rows FROM and on of MODEL's table of rows by position (ape_learned, t5, cope) take the values of\n"
                        "  the row PERIOD before them; OUT.bin, a file of its own, holds the edited model for ./train --load";
    if (help_asked(argc, argv) || argc != 5) return print_usage(usage, help_asked(argc, argv));
    try {
        table_extend(argv[1], int_argument("FROM", argv[2]), int_argument("PERIOD", argv[3]), argv[4]);
    } catch (const Error& e) {
        fprintf(stderr, "dev/table_extend: error: %s\n", e.what());
        return 1;
    }
    return 0;
}
#endif
