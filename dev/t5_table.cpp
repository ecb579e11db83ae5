/*
 dev/t5_table.cpp: what a trained T5 model learned in its relative-bias table, bucket by bucket,
 beside which distances training could ever show it.

   make dev/t5_table && ./dev/t5_table runs/copy-t5-tiny-s256788/model.bin [more checkpoints]

 For each checkpoint (of a --pe t5 run; with --pe-per-layer, each layer's table in turn): one
 row per bucket with the distances i - j it covers, up to the longest a test query that predicts
 sees; whether training reached all of them, part of them or none; and the learned bias of every
 head. Training reaches a distance when a loss reads it: the run's longest training example has
 T tokens (its own lengths, which the checkpoint holds), and the query at its last token, <eos>,
 predicts nothing, so distances 0..T-2 (with --random-positions L, 0..L-2; test_analysis checks
 that the bias of T-1 gets no gradient). The buckets only the longest training sequences reach (at their lower end, or
 wholly) can learn a marker of those lengths, which a longer sequence meets too early; a bucket
 training never reached keeps its init. dev/t5_clamp.sh edits both kinds and evaluates the
 result: on copy the first kind fails T5 and the second does not (docs/reproduction-cpu.md,
 "Inside T5").
*/
#ifndef TESTING  // built as a program: train.cu's code without its main (a test includes train.cu itself)
#define TESTING
#define T5_TABLE_MAIN
#include "train.cu"
#endif
#include "dev/tool.h"

enum BucketReach { REACHED_ALL, REACHED_PARTLY, REACHED_NEVER };
static const char* const REACH_NAMES[] = {"all", "partly", "never"};

// a bucket of the distances up to the longest test sequence's, and how much of it training reached
struct BucketRow {
    int bucket, lo, hi;  // distances lo..hi
    BucketReach reach;
};

// the buckets distances 0..limit fall in, in order, each with the distances it covers and
// whether distances 0..trained reach all of it, part of it or none
static std::vector<BucketRow> bucket_rows(int limit, int trained) {
    std::vector<BucketRow> rows;
    for (int n = 0; n <= limit; n++) {
        int b = t5_bucket(n);
        if (rows.empty() || rows.back().bucket != b) rows.push_back({b, n, n, REACHED_ALL});
        rows.back().hi = n;
    }
    for (BucketRow& row : rows) row.reach = row.hi <= trained ? REACHED_ALL : row.lo <= trained ? REACHED_PARTLY : REACHED_NEVER;
    return rows;
}

static void print_table(const std::string& path) {
    int32_t pe = read_checkpoint_header(path)[H_PE];  // refused before its data is built
    if (pe != PE_T5) fail("%s is a --pe %s checkpoint, not --pe t5", path.c_str(), header_value(H_PE, pe).c_str());
    RunConfig config;
    Run r(&config);
    load_run(&r, path);  // which says what it built: the run's data (its lengths), the model
    const ModelConfig& c = r.model.config;
    int longest_train = train_split(r).max_example_len(), longest_test = test_split(r).max_example_len();
    // the farthest a predicting query (not <eos>) looks; with --random-positions L, training
    // draws positions from 0..L-1, and its predicting queries sit at L-2 at most
    int trained = config.random_positions > 0 ? config.random_positions - 2 : longest_train - 2;
    std::vector<BucketRow> rows = bucket_rows(longest_test - 2, trained);

    printf("%s: %s, %d heads; training sequences up to %d tokens (distances 0-%d%s), test up to %d\n", path.c_str(),
           config.task.c_str(), c.NH, longest_train, trained, config.random_positions > 0 ? ", positions drawn" : "", longest_test);
    for (int l = 0; l < param_copies(c, P_PE_TABLE); l++) {
        if (c.pe_per_layer) printf("layer %d's table:\n", l);
        printf("%6s %11s %9s |", "bucket", "distances", "trained");
        for (int head = 0; head < c.NH; head++) printf(" %7s%d", "head ", head);
        printf("\n");
        const real* table = r.model.param(P_PE_TABLE, l);  // (buckets, NH)
        for (const BucketRow& row : rows) {
            printf("%6d %5d-%-5d %9s |", row.bucket, row.lo, row.hi, REACH_NAMES[row.reach]);
            for (int head = 0; head < c.NH; head++) printf(" %8.3f", table[row.bucket * c.NH + head]);
            printf("\n");
        }
    }
}

#ifdef T5_TABLE_MAIN
int main(int argc, char** argv) {
    const char* usage = "dev/t5_table CHECKPOINT [CHECKPOINT ...]\n"
                        "  a --pe t5 model's learned bias, bucket by bucket, beside the distances training reached";
    if (help_asked(argc, argv) || argc < 2) return print_usage(usage, help_asked(argc, argv));
    try {
        for (int i = 1; i < argc; i++) print_table(argv[i]);
    } catch (const Error& e) {
        fprintf(stderr, "dev/t5_table: error: %s\n", e.what());
        return 1;
    }
    return 0;
}
#endif
