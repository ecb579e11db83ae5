/*
 dev/t5_table.cpp: what a trained T5 model learned in its relative-bias table, bucket by bucket,
 beside which distances training could ever show it.

   make dev/t5_table && ./dev/t5_table runs/copy-t5-tiny-s256788/model.bin [more checkpoints]

 For each checkpoint (of a --pe t5 run, trained on its task's default lengths; with
 --pe-per-layer, each layer's table in turn): one row per bucket with the distances i - j it
 covers, the largest distance any training sequence reaches (the longest training example has T
 tokens, so distances 0..T-1), and the learned bias of every head. A bucket that training reached only at its lower end, or never, is where a model trained on
 short sequences meets its first surprise at longer ones: the bias there was learned from (or
 left at) what the last training lengths needed.
*/
#include <cstdio>

#include "model.h"
#include "tasks.h"

// the distances each bucket covers, up to distance `limit`
static void bucket_ranges(int limit, int lo[T5_NUM_BUCKETS], int hi[T5_NUM_BUCKETS]) {
    for (int b = 0; b < T5_NUM_BUCKETS; b++) lo[b] = -1, hi[b] = -1;
    for (int n = 0; n <= limit; n++) {
        int b = t5_bucket(n);
        if (lo[b] < 0) lo[b] = n;
        hi[b] = n;
    }
}

static void print_table(const std::string& path) {
    Header h = read_checkpoint_header(path);
    if (h[H_PE] != PE_T5) fail("%s is not a --pe t5 checkpoint", path.c_str());
    ModelConfig c{h[H_LAYERS], h[H_D_MODEL], h[H_HEADS], h[H_D_FF], h[H_VOCAB], 1, PE_T5, bits_float(h[H_ROPE_FRAC]), 0.0f};
    // --pe-per-layer is a run flag, not a model field of the header: its checkpoints hold a table per layer
    ModelConfig per_layer = c;
    per_layer.pe_per_layer = true;
    c.pe_per_layer = c.L > 1 && header_num_params(h) == make_layout(per_layer).total;
    Model m;
    model_init(&m, c, 1, 0);
    load_checkpoint(path, h, &m);

    Dataset data = make_dataset(find_task(header_task(h)), DataConfig{});
    int longest_train = data.splits[SPLIT_TRAIN].max_example_len(), longest_test = data.splits[SPLIT_TEST].max_example_len();
    int lo[T5_NUM_BUCKETS], hi[T5_NUM_BUCKETS];
    bucket_ranges(longest_test - 1, lo, hi);

    printf("%s: %s, %d heads; training sequences up to %d tokens (distances 0-%d), test up to %d\n", path.c_str(),
           header_task(h).c_str(), c.NH, longest_train, longest_train - 1, longest_test);
    for (int l = 0; l < param_copies(c, P_PE_TABLE); l++) {
        if (c.pe_per_layer) printf("layer %d's table:\n", l);
        printf("%6s %11s %9s |", "bucket", "distances", "trained");
        for (int head = 0; head < c.NH; head++) printf(" %7s%d", "head ", head);
        printf("\n");
        const float* table = m.param(P_PE_TABLE, l);  // (buckets, NH)
        for (int b = 0; b < T5_NUM_BUCKETS && lo[b] >= 0; b++) {
            const char* trained = hi[b] < longest_train ? "all" : lo[b] < longest_train ? "partly" : "never";
            printf("%6d %5d-%-5d %9s |", b, lo[b], hi[b], trained);
            for (int head = 0; head < c.NH; head++) printf(" %8.3f", table[b * c.NH + head]);
            printf("\n");
        }
    }
}

#ifndef TESTING
int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: dev/t5_table CHECKPOINT [CHECKPOINT ...]\n");
        return 1;
    }
    try {
        for (int i = 1; i < argc; i++) print_table(argv[i]);
    } catch (const Error& e) {
        fprintf(stderr, "t5_table: error: %s\n", e.what());
        return 1;
    }
    return 0;
}
#endif
