# tests/fuzz/: libFuzzer harnesses of everything that parses untrusted bytes (issue 18): the
# manifest reader, the safetensors header, the BPE merges loader and encoder, the CSV/TSV/EPIC
# and Ego4D annotation readers, the labelled formats and class lists (issue 28), and ring open on
# a mapped segment. Each input ends at a guard page. `make test` replays the committed seed corpora (tests/fuzz/corpus/<name>) with a
# gcc build; `make fuzz FUZZ_SECONDS=N` runs each harness under libFuzzer + ASan + UBSan (clang).
FUZZERS := manifest safetensors bpe_merges bpe_encode annot_csv ego4d ring label_csv
fuzz_safetensors_SRCS := model/st_file.c common/json_lex.c common/fs_dir.c
FUZZ_BPE_SRCS := data/bpe_tokenizer.c data/bpe_text.c data/bpe_clean.c data/bpe_ftfy.c data/bpe_tables.c data/bpe_uclass.c \
                 common/fs_dir.c
# the reader finds the captions' vocabulary next to the manifest (bpe_load) and quotes its path
fuzz_manifest_SRCS := data/manifest_reader.c data/manifest_labels.c common/crc32.c data/manifest_packets.c common/errbuf.c \
                      common/shell_quote.c $(FUZZ_BPE_SRCS)
fuzz_bpe_merges_SRCS := $(FUZZ_BPE_SRCS)
fuzz_bpe_encode_SRCS := $(FUZZ_BPE_SRCS)
fuzz_annot_csv_SRCS := tools/prep_annot.c tools/prep_json.c common/json_lex.c $(FUZZ_BPE_SRCS)
fuzz_ego4d_SRCS := $(fuzz_annot_csv_SRCS)
# the labelled formats of prep (ek100-train, labels-csv, kinetics) and the class lists of prep and eval
FUZZ_BENCH_SRCS := tools/eval_bench_util.c tools/eval_bench_ek100.c tools/eval_bench_charades.c tools/eval_bench_egtea.c \
                   tools/eval_bench_egomcq.c tools/eval_bench_ek100cls.c common/errbuf.c
fuzz_label_csv_SRCS := tools/prep_labels.c tools/class_names.c $(FUZZ_BENCH_SRCS) $(fuzz_annot_csv_SRCS)
fuzz_ring_SRCS := $(shm-layout_SRCS) common/proc_time.c common/errbuf.c # liveness: fuzz_ring.c defines proc_is_dead by a rule
fuzz_ring_MAXLEN := 131072# a ring segment of 1-2 small slots is 53-58 kB

TESTS += $(addprefix test_fuzz_,$(FUZZERS))
$(foreach f,$(FUZZERS),$(eval test_fuzz_$(f)_SRCS := tests/fuzz/fuzz_$(f).c tests/fuzz/fuzz_replay.c))
test_fuzz_manifest_LIBS := data common
test_fuzz_safetensors_LIBS := model common
test_fuzz_bpe_merges_LIBS := data common
test_fuzz_bpe_encode_LIBS := data common
test_fuzz_annot_csv_SRCS += tools/prep_annot.c tools/prep_json.c
test_fuzz_annot_csv_LIBS := data common
test_fuzz_ego4d_SRCS += tools/prep_annot.c tools/prep_json.c
test_fuzz_ego4d_LIBS := data common
test_fuzz_label_csv_SRCS += tools/prep_labels.c tools/prep_annot.c tools/prep_json.c
test_fuzz_label_csv_LIBS := tools data common
test_fuzz_ring_LIBS := shm-layout common
# the ring harness opens the segment through ring_attach_mapping (shm-layout/ring_layout.h, private)
$(BUILD)/obj/tests/fuzz/fuzz_ring.o: INC = $(TEST_INC) -Ishm-layout

FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
FUZZ_RUNS ?= -1
FUZZ_CFLAGS := -std=gnu11 -g -O1 -pthread -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined \
               -fno-sanitize-recover=undefined -Icommon -Idata -Istream -Ishm-layout -Ikernels -Imodel $(UTF8PROC_CFLAGS)
FUZZ_LDLIBS := $(UTF8PROC_LIBS) $(ZLIB_LIBS) -lm
define FUZZ_template
$(BUILD)/fuzz/fuzz_$(1): tests/fuzz/fuzz_$(1).c tests/fuzz/fuzz_util.h $$(fuzz_$(1)_SRCS)
	@mkdir -p $$(dir $$@)
	$$(FUZZ_CC) $$(FUZZ_CFLAGS) -o $$@ $$< $$(fuzz_$(1)_SRCS) $$(FUZZ_LDLIBS)
endef
$(foreach f,$(FUZZERS),$(eval $(call FUZZ_template,$(f))))
$(BUILD)/fuzz/fuzz_manifest: tests/manifest_recrc.h # repairs each input's checksums

.PHONY: fuzz fuzz-build
fuzz-build: $(addprefix $(BUILD)/fuzz/fuzz_,$(FUZZERS))
# each harness for FUZZ_SECONDS (or FUZZ_RUNS executions); new inputs go to build/fuzz/corpus-<name>,
# a crashing input to build/fuzz/crash-<name>-*, the log to build/fuzz/<name>.log; the committed
# seeds are read, never written. A finding stops here with the harness's exit status.
fuzz: fuzz-build
	@for f in $(FUZZERS); do mkdir -p $(BUILD)/fuzz/corpus-$$f; \
	  maxlen=65536; [ $$f = ring ] && maxlen=$(fuzz_ring_MAXLEN); \
	  $(BUILD)/fuzz/fuzz_$$f -max_total_time=$(FUZZ_SECONDS) -runs=$(FUZZ_RUNS) -max_len=$$maxlen \
	    -print_final_stats=1 -artifact_prefix=$(BUILD)/fuzz/crash-$$f- $(BUILD)/fuzz/corpus-$$f tests/fuzz/corpus/$$f \
	    >$(BUILD)/fuzz/$$f.log 2>&1; rc=$$?; \
	  echo "fuzz_$$f: $$(sed -n 's/^stat::number_of_executed_units: *//p' $(BUILD)/fuzz/$$f.log) executions," \
	    "$$(ls $(BUILD)/fuzz/corpus-$$f | wc -l) new corpus inputs, exit $$rc"; \
	  if [ $$rc != 0 ]; then grep -E 'ERROR|SUMMARY|artifact' $(BUILD)/fuzz/$$f.log; exit $$rc; fi; done
