/*
 dev/head_ablate.cpp: an intervention on a trained model: the heads named no longer write to the
 residual stream. Each LAYER:HEAD (both from 0) has its HS columns of that layer's output
 projection wo set to zero, the columns that multiply the head's slice of the attention output,
 so whatever the head attends to, its layer adds nothing of it. This is zero ablation: the layers
 after see nothing where they saw the head's output, not that output's mean, so a model may also
 fail for lack of a constant the head supplied; read the result beside other heads ablated alike.
 With --zero-query the heads keep writing but no longer choose where to look: each one's HS rows
 of its layer's query projection wq are set to zero, so its scores are what the PE adds without
 a query (nothing for NoPE, APE and RoPE, whose attention is then even over the prefix: the
 running mean of the head's values; T5's and ALiBi's bias alone). That separates what a head
 reads from where it reads it. The model is written as a new checkpoint for ./train --load.

   make dev/head_ablate && ./dev/head_ablate [--zero-query] RUN/model.bin LAYER:HEAD[,LAYER:HEAD...] OUT.bin
   ./train --load OUT.bin [--sample N]

 docs/reproduction-cpu.md ("Copy with four layers") uses it on a RoPE model whose copies stop one
 turn of its fastest rotated pair short, to ask whether the head that attends with that pair's
 period is what counts the turns.
*/
#ifndef TESTING  // built as a program: train.cu's code without its main (a test includes train.cu itself)
#define TESTING
#define HEAD_ABLATE_MAIN
#include "train.cu"
#endif
#include "dev/tool.h"

struct HeadId {
    int layer, head;
};

// "1:0,3:2" -> {1, 0}, {3, 2}: each within the model's layers and heads, none named twice
static std::vector<HeadId> parse_heads(const std::string& text, const ModelConfig& c) {
    std::vector<HeadId> heads;
    if (!text.empty() && text.back() == ',') fail("'%s' ends with a comma: give LAYER:HEAD[,LAYER:HEAD...]", text.c_str());
    std::stringstream list(text);
    for (std::string item; std::getline(list, item, ',');) {
        size_t colon = item.find(':');
        if (colon == std::string::npos) fail("'%s' is not LAYER:HEAD", item.c_str());
        HeadId id;
        parse_value(Flag{"LAYER", FLAG_INT, &id.layer, false, ANY, ""}, item.substr(0, colon).c_str());
        parse_value(Flag{"HEAD", FLAG_INT, &id.head, false, ANY, ""}, item.substr(colon + 1).c_str());
        if (id.layer >= c.L) fail("layer %d: the model's layers are 0-%d", id.layer, c.L - 1);
        if (id.head >= c.NH) fail("head %d: the model's heads are 0-%d", id.head, c.NH - 1);
        for (const HeadId& seen : heads)
            if (seen.layer == id.layer && seen.head == id.head) fail("head %d:%d is named twice", id.layer, id.head);
        heads.push_back(id);
    }
    if (heads.empty()) fail("no head named: give LAYER:HEAD[,LAYER:HEAD...]");
    return heads;
}

// what an ablation takes from a head: its output, or its query
enum Ablation { ABLATE_OUTPUT, ABLATE_QUERY };

// wo is stored (C out, C in) and multiplies the attention output, whose dims
// [head * HS, (head + 1) * HS) are the head's (model.h's attention writes each head's slice)
static void ablate_output(Model* m, HeadId id) {
    const ModelConfig& c = m->config;
    real* wo = m->param(P_WO, id.layer);
    for (int o = 0; o < c.C; o++) {
        real* row = wo + (size_t)o * c.C;
        std::fill(row + id.head * c.HS(), row + (id.head + 1) * c.HS(), real(0));
    }
}

// wq is stored (C out, C in): its out dims [head * HS, (head + 1) * HS), whole rows, are the head's query
static void ablate_query(Model* m, HeadId id) {
    const ModelConfig& c = m->config;
    real* wq = m->param(P_WQ, id.layer);
    std::fill(wq + (size_t)id.head * c.HS() * c.C, wq + (size_t)(id.head + 1) * c.HS() * c.C, real(0));
}

static void head_ablate(const std::string& in, const std::string& heads_text, const std::string& out, Ablation what = ABLATE_OUTPUT) {
    if (same_file(in, out)) fail("%s is the model read: write the edited model to a file of its own", out.c_str());
    RunConfig c;
    Run r(&c);
    r.quiet = true;  // the tool's own line says what it did
    Header h = load_run(&r, in);
    if (h[H_KIND] != CKPT_MODEL) fail("%s holds a training state: give a run's model.bin", in.c_str());
    for (HeadId id : parse_heads(heads_text, r.model.config)) (what == ABLATE_OUTPUT ? ablate_output : ablate_query)(&r.model, id);
    save_checkpoint(out, r.model, h);
    if (what == ABLATE_OUTPUT) printf("wrote %s: heads %s write nothing (their columns of wo are zero)\n", out.c_str(), heads_text.c_str());
    else printf("wrote %s: heads %s have no query (their rows of wq are zero)\n", out.c_str(), heads_text.c_str());
}

#ifdef HEAD_ABLATE_MAIN
int main(int argc, char** argv) {
    Ablation what = argc > 1 && !strcmp(argv[1], "--zero-query") ? ABLATE_QUERY : ABLATE_OUTPUT;
    int first = what == ABLATE_QUERY ? 2 : 1;
    const char* usage = "dev/head_ablate [--zero-query] MODEL.bin LAYER:HEAD[,LAYER:HEAD...] OUT.bin\n"
                        "  the heads named (layers and heads from 0) write nothing to the residual stream, or with\n"
                        "  --zero-query have no query; OUT.bin, a file of its own, holds the edited model for ./train --load";
    if (help_asked(argc, argv) || argc - first != 3) return print_usage(usage, help_asked(argc, argv));
    try {
        head_ablate(argv[first], argv[first + 1], argv[first + 2], what);
    } catch (const Error& e) {
        fprintf(stderr, "dev/head_ablate: error: %s\n", e.what());
        return 1;
    }
    return 0;
}
#endif
