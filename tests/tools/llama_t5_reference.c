// llama.cpp's logits for a T5 GGUF file (llama.cpp's t5 architecture), for tests/data/gguf/models/reference.json.
// node-llama-cpp 3.22.1 runs decoder-only models only, so this program calls the library it ships (llama.cpp's tag
// v0.5.0, prebuilt) directly: llama_encode on the source ids, then llama_decode on the decoder's start token and the
// target ids in one batch, every position's logits kept. CPU only, 2 threads, the KV cache in F32, no flash attention,
// as gguf_reference.mjs runs the other files. Prints one JSON object: {"source": [...], "target": [...], "logits":
// [[...], ...]}, a row per decoder position (the start token's first).
//
// Built against the headers of the same llama.cpp (node-llama-cpp's llama/gitRelease.bundle, cloned), in a scratch
// directory holding `npm install node-llama-cpp@3.22.1` and that clone as llama.cpp/:
//   BINS=$PWD/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64
//   LIBS="$BINS/libllama.v0.5.0.so $BINS/libggml.v0.5.0.so $BINS/libggml-base.so"
//   cc -O2 -I llama.cpp/include -I llama.cpp/ggml/include PATH/TO/llama_t5_reference.c $LIBS -Wl,-rpath,$BINS -o llama_t5_reference
//   ./llama_t5_reference $BINS FILE.gguf SOURCE_IDS TARGET_IDS      (ids comma-separated)
#include "ggml-backend.h"
#include "llama.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_ids(const char *text, llama_token *out, int max)
{
    int n = 0;
    for (const char *p = text; *p && n < max;) {
        out[n++] = (llama_token)strtol(p, (char **)&p, 10);
        if (*p == ',')
            ++p;
    }
    return n;
}

static bool silent(float progress, void *user)
{
    (void)progress;
    (void)user;
    return true;
}

static void quiet(enum ggml_log_level level, const char *text, void *user)
{
    (void)user;
    if (level >= GGML_LOG_LEVEL_ERROR)
        fputs(text, stderr);
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: %s BACKEND_DIR FILE.gguf SOURCE_IDS TARGET_IDS\n", argv[0]);
        return 2;
    }
    llama_log_set(quiet, NULL);
    ggml_backend_load_all_from_path(argv[1]);
    llama_backend_init();
    llama_token source[256], target[256];
    const int n_source = parse_ids(argv[3], source, 256), n_target = parse_ids(argv[4], target, 255);

    struct llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = 0;
    mp.progress_callback = silent;
    struct llama_model *model = llama_model_load_from_file(argv[2], mp);
    if (!model || !llama_model_has_encoder(model)) {
        fprintf(stderr, "%s: not loaded, or not an encoder-decoder\n", argv[2]);
        return 1;
    }
    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx = cp.n_batch = cp.n_ubatch = 256;
    cp.n_threads = cp.n_threads_batch = 2;
    cp.type_k = cp.type_v = GGML_TYPE_F32;
    cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
    struct llama_context *ctx = llama_init_from_model(model, cp);
    if (!ctx || llama_encode(ctx, llama_batch_get_one(source, n_source)) != 0) {
        fprintf(stderr, "%s: encoding failed\n", argv[2]);
        return 1;
    }
    const int n = n_target + 1;
    struct llama_batch batch = llama_batch_init(n, 0, 1);
    for (int i = 0; i < n; ++i) {
        batch.token[i] = i == 0 ? llama_model_decoder_start_token(model) : target[i - 1];
        batch.pos[i] = i;
        batch.n_seq_id[i] = 1;
        batch.seq_id[i][0] = 0;
        batch.logits[i] = 1;
    }
    batch.n_tokens = n;
    if (llama_decode(ctx, batch) != 0) {
        fprintf(stderr, "%s: decoding failed\n", argv[2]);
        return 1;
    }
    const int vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
    printf("{\"source\": [");
    for (int i = 0; i < n_source; ++i)
        printf("%s%d", i ? ", " : "", source[i]);
    printf("], \"target\": [");
    for (int i = 0; i < n_target; ++i)
        printf("%s%d", i ? ", " : "", target[i]);
    printf("], \"logits\": [");
    for (int i = 0; i < n; ++i) {
        const float *row = llama_get_logits_ith(ctx, i);
        printf("%s[", i ? ", " : "");
        for (int v = 0; v < vocab; ++v)
            printf("%s%.8g", v ? ", " : "", row[v]);
        printf("]");
    }
    printf("]}\n");
    llama_batch_free(batch);
    llama_free(ctx);
    llama_model_free(model);
    llama_backend_free();
    return 0;
}
