#!/usr/bin/env bash
# tools/eval --task ek100-mir|ek100-cls|charades-ego|egtea|egomcq end to end on tiny synth videos: each
# benchmark's files written in its own format from synth's held-out clips, prep --format TASK,
# eval with an untrained model. Checks: the figures are there and in range, oracle cases (every
# pair relevant, every video of every class, one class, one choice) score exactly 1, chance-level figures stay below loose bounds, and a
# damaged or mismatched file fails naming file and line.
set -euo pipefail
for p in tools/synth tools/prep tools/eval; do
	[ -x $p ] || { echo "$p not built (needs libav)"; exit 77; }
done
d=$(mktemp -d /tmp/test_eval_bench_XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$d"' EXIT
tools/synth --out "$d/src" --videos 0 --heldout 2 --minutes 0.5 --size 160x96 --fps 10 2>/dev/null
V=$d/src/videos
EV=(--init-seed 1 --frames 4 --round-size 8 --quiet --json)
prep() { # prep NAME FORMAT FILE: the benchmark's manifest
	tools/prep --annotations "$3" --format "$2" --video-root "$V" --out "$d/$1" --chunk-sec 10 --short-side 96 \
		-j 2 2>"$d/$1.log" || { cat "$d/$1.log"; echo "FAIL: prep --format $2"; exit 1; }
}
fails() { # fails NEEDLE CMD...: CMD exits non-zero and says NEEDLE
	local needle=$1; shift
	if "$@" >"$d/out" 2>&1; then echo "FAIL: accepted: $*"; exit 1; fi
	grep -qF -- "$needle" "$d/out" || { echo "FAIL: '$needle' not in: $(cat "$d/out")"; exit 1; }
	echo "ok: refused: $(grep -F -- "$needle" "$d/out" | head -1)"
}
field() { # field KEY FILE: a number of the JSON line
	sed -n "s/.*\"$1\":\([-0-9.e]*\).*/\1/p" "$2"
}
check() { # check EXPR: awk arithmetic on the figures
	awk "BEGIN { exit !($1) }" || { echo "FAIL: $1"; exit 1; }
}

# ---- EK-100 MIR: clips, sentences (one per distinct caption), relevance clips x sentences ------
hms() { awk -F, -v OFS=, '{ printf "%02d:%02d:%05.2f", int($1 / 3600), int($1 / 60) % 60, $1 - 60 * int($1 / 60) }' <<<"$1"; }
{
	echo "narration_id,participant_id,video_id,narration_timestamp,start_timestamp,stop_timestamp,start_frame,stop_frame,narration,verb,verb_class,noun,noun_class,all_nouns,all_noun_classes"
	i=0
	tail -n +2 "$d/src/heldout.csv" | while IFS=, read -r v s e c; do
		echo "n$i,P01,$v,$(hms "$s"),$(hms "$s"),$(hms "$e"),0,0,$c,x,0,y,0,[],[]"
		i=$((i + 1))
	done
} >"$d/mir.csv"
{
	echo "narration_id,narration"
	awk -F, 'NR > 1 && !seen[$9]++ { print $1 "," $9 }' "$d/mir.csv"
} >"$d/mir_sentence.csv"
nc=$(($(wc -l <"$d/mir.csv") - 1)) ns=$(($(wc -l <"$d/mir_sentence.csv") - 1))
rel() { # rel ALL: relevance 1 for the same caption (ALL=1: for every pair), 0.5 for the same object
	awk -F, -v all="$1" -v nc="$nc" -v ns="$ns" '
		FNR == 1 { next }
		FILENAME == ARGV[1] { cap[n++] = $9; next }
		{ sent[m++] = $2 }
		END {
			print "avclip-relevance 1", nc, ns
			for (i = 0; i < n; i++) for (j = 0; j < m; j++) {
				split(cap[i], a, " "); split(sent[j], b, " ")
				if (all || cap[i] == sent[j]) print i, j, 1
				else if (a[2] == b[2] && a[3] == b[3]) print i, j, 0.5
			}
		}' "$d/mir.csv" "$d/mir_sentence.csv"
}
rel 0 >"$d/mir.rel"
rel 1 >"$d/mir_all.rel"
prep mir ek100-mir "$d/mir.csv"
MIR=(--task ek100-mir --manifest "$d/mir/manifest" --bench-file "$d/mir.csv" --bench-aux "$d/mir_sentence.csv")
tools/eval "${EV[@]}" "${MIR[@]}" --relevance "$d/mir.rel" >"$d/mir.json"
cat "$d/mir.json"
grep -q "\"task\":\"ek100-mir\",\"n\":$nc,\"frames\":4,\"benchmark_protocol\":true" "$d/mir.json"
grep -q "\"sentences\":$ns" "$d/mir.json"
for k in map_v2t map_t2v map_avg ndcg_v2t ndcg_t2v ndcg_avg; do check "$(field $k "$d/mir.json") > 0 && $(field $k "$d/mir.json") <= 1"; done
check "$(field map_avg "$d/mir.json") < 0.9" # untrained: far from the oracle
tools/eval "${EV[@]}" "${MIR[@]}" --relevance "$d/mir_all.rel" >"$d/mir_all.json"
for k in map_v2t map_t2v ndcg_v2t ndcg_t2v; do check "$(field $k "$d/mir_all.json") == 1"; done
tools/eval --init-seed 1 --frames 4 --quiet "${MIR[@]}" --relevance "$d/mir.rel" | grep -q 'mAP   V->T'
sed "1s/.*/avclip-relevance 1 $nc $((ns + 1))/" "$d/mir.rel" >"$d/mir_wide.rel"
fails "the matrix is $nc x $((ns + 1)), want $nc x $ns" tools/eval "${EV[@]}" "${MIR[@]}" --relevance "$d/mir_wide.rel"
fails "ek100-mir needs --bench-aux EPIC_100_retrieval_test_sentence.csv and --relevance" tools/eval "${EV[@]}" "${MIR[@]}"
fails "takes 4 frames per clip, the model has 2" tools/eval --init-seed 1 --quiet "${MIR[@]}" --relevance "$d/mir.rel"
sed '3s/,n1,/,n1,/; 3s/\(,[0-9:.]*\),\([0-9:.]*\),0,0,/\1,99:00:00.00,0,0,/' "$d/mir.csv" >"$d/mir_bad.csv"
fails "manifest sample 1 is heldout-0000" tools/eval "${EV[@]}" "${MIR[@]/$d\/mir.csv/$d/mir_bad.csv}" \
	--relevance "$d/mir.rel"
sed '1s/stop_timestamp/stop/' "$d/mir.csv" >"$d/mir_nocol.csv"
fails "mir_nocol.csv:1: no column 'stop_timestamp'" tools/eval "${EV[@]}" "${MIR[@]/$d\/mir.csv/$d/mir_nocol.csv}" \
	--relevance "$d/mir.rel"

# ---- Charades-Ego: one row per video, the whole video, actions of synth's shapes --------------
printf 'c000 circle\nc001 square\nc002 triangle\n' >"$d/classes.txt"
charades() { # charades ACTIONS...: a test list with the videos' actions in order
	echo "id,subject,scene,quality,relevance,verified,script,objects,descriptions,actions,length,egocentric,charades_video"
	local k=0
	for a in "$@"; do echo "heldout-000$k,S,Room,5,5,Yes,s,,d,$a,29.5,Yes,x"; k=$((k + 1)); done
}
charades "c000 1.5 4.5;c001 16.3 18.3" "c002 0 10" >"$d/ch.csv"
prep ch charades-ego "$d/ch.csv"
CH=(--task charades-ego --manifest "$d/ch/manifest" --bench-file "$d/ch.csv" --bench-aux "$d/classes.txt")
fails "takes 16 frames per clip, the model has 4" tools/eval "${EV[@]}" "${CH[@]}"
tools/eval "${EV[@]}" "${CH[@]}" --frame-protocol midpoints >"$d/ch.json" 2>"$d/ch.log"
cat "$d/ch.json"
grep -q 'not the benchmark' "$d/ch.log"
grep -q '"benchmark_protocol":false' "$d/ch.json"
grep -q '"classes":3,"classes_used":3,"templates":2' "$d/ch.json"
check "$(field map "$d/ch.json") > 0 && $(field map "$d/ch.json") <= 1"
# oracle: every video has every class, so each class's AP is 1 whatever the scores
charades "c000 0 1;c001 0 1;c002 0 1" "c000 0 1;c001 0 1;c002 0 1" >"$d/ch_all.csv"
tools/eval "${EV[@]}" "${CH[@]/$d\/ch.csv/$d/ch_all.csv}" --frame-protocol midpoints --templates none 2>/dev/null >"$d/ch_all.json"
grep -q '"templates":1' "$d/ch_all.json"
check "$(field map "$d/ch_all.json") == 1"
charades "c000 1.5 4.5;c003 16.3 18.3" "c002 0 10" >"$d/ch_bad.csv"
fails "ch_bad.csv:2: unknown class 'c003' (not in the classes file)" tools/eval "${EV[@]}" \
	"${CH[@]/$d\/ch.csv/$d/ch_bad.csv}" --frame-protocol midpoints
charades "c000 1.5 34.5" "c002 0 10" >"$d/ch_time.csv"
fails "ch_time.csv:2: action c000 at 1.50-34.50 s is outside the video" tools/eval "${EV[@]}" \
	"${CH[@]/$d\/ch.csv/$d/ch_time.csv}" --frame-protocol midpoints

# ---- EGTEA: a split file of whole clips (synth's two videos) and action_idx.txt -----------------
printf 'Circle_Grows 1\nSquare_moves 2\n' >"$d/action_idx.txt"
printf 'heldout-0000 1 1 1\nheldout-0001 2 1 1\n' >"$d/split.txt"
prep eg egtea "$d/split.txt"
EG=(--task egtea --manifest "$d/eg/manifest" --bench-file "$d/split.txt" --bench-aux "$d/action_idx.txt")
fails "egtea: the benchmark's protocol takes 16 frames per clip, the model has 4" tools/eval "${EV[@]}" "${EG[@]}"
fails "egtea: --frame-protocol midpoints takes one view (--views 1x1, not 10x3)" tools/eval "${EV[@]}" "${EG[@]}" \
	--frame-protocol midpoints --views 10x3
# EGTEA's own protocol: 16 frames at stride 2, C clips over the video x S crops, scores max over views
# (tests/test_eval_views.c: the views equal single-view embeddings, the max their scores' max)
EV16=(--init-seed 1 --frames 16 --round-size 8 --quiet --json)
tools/eval "${EV16[@]}" "${EG[@]}" --views 2x3 >"$d/eg_views.json"
cat "$d/eg_views.json"
grep -q '"task":"egtea","n":2,"frames":16,"benchmark_protocol":true,' "$d/eg_views.json"
grep -q '"views":"2x3","stride":2,"classes":2,"classes_present":2' "$d/eg_views.json"
t1=$(field top1 "$d/eg_views.json")
check "$t1 == 0 || $t1 == 0.5 || $t1 == 1"
for v in 2x2 1x6; do
	fails "egtea: --views $v: the spatial crops are 1 (centre) or 3" tools/eval "${EV16[@]}" "${EG[@]}" --views $v
done
for v in 0x3 3 2x3x1 x3 65x1; do
	fails "--views '$v': expected CxS" tools/eval "${EV16[@]}" "${EG[@]}" --views $v
done
tools/eval "${EV[@]}" "${EG[@]}" --frame-protocol midpoints 2>/dev/null >"$d/eg.json"
cat "$d/eg.json"
grep -q '"n":2,' "$d/eg.json" && grep -q '"classes":2,"classes_present":2' "$d/eg.json"
t1=$(field top1 "$d/eg.json")
check "$t1 == 0 || $t1 == 0.5 || $t1 == 1"
check "$(field mean_class_acc "$d/eg.json") == $t1" # one clip per class: mean-class = top-1
# oracle: one class, every clip's argmax
printf 'Circle_Grows 1\n' >"$d/action_one.txt"
printf 'heldout-0000 1 1 1\nheldout-0001 1 1 1\n' >"$d/split_one.txt"
tools/eval "${EV[@]}" "${EG[@]/$d\/split.txt/$d/split_one.txt}" --bench-aux "$d/action_one.txt" \
	--frame-protocol midpoints 2>/dev/null >"$d/eg_one.json"
check "$(field top1 "$d/eg_one.json") == 1 && $(field mean_class_acc "$d/eg_one.json") == 1"
tools/eval "${EV16[@]}" "${EG[@]/$d\/split.txt/$d/split_one.txt}" --bench-aux "$d/action_one.txt" --views 2x3 \
	>"$d/eg_one_views.json"
grep -q '"views":"2x3","stride":2' "$d/eg_one_views.json"
check "$(field top1 "$d/eg_one_views.json") == 1"
printf 'heldout-0000 1 1 1\nheldout-0001 3 1 1\n' >"$d/split_bad.txt"
fails "split_bad.txt:2: action 3 is not in the actions file (1-2)" tools/eval "${EV[@]}" \
	"${EG[@]/$d\/split.txt/$d/split_bad.txt}" --frame-protocol midpoints

# ---- EgoMCQ: questions over synth's clips -------------------------------------------------------
mcq() { # mcq ANSWER TYPE K: two questions of K choices over synth's first 2K clips
	awk -F, -v ans="$1" -v type="$2" -v K="$3" 'BEGIN { n = 0 } NR > 1 { v[n] = $1; s[n] = $2; e[n] = $3; c[n++] = $4 }
		END {
			printf "{"
			for (q = 0; q < 2; q++) {
				printf "%s\"%d\": {\"query\": {\"clip_text\": \"%s\"}, \"answer\": %d, \"types\": %d, \"choices\": {", q ? ", " : "", q, c[q * K + ans], ans, type
				for (k = 0; k < K; k++) {
					i = q * K + k
					printf "%s\"%d\": {\"video_uid\": \"%s\", \"clip_start\": %s, \"clip_end\": %s, \"clip_text\": \"%s\"}", k ? ", " : "", k, v[i], s[i], e[i], c[i]
				}
				printf "}}"
			}
			print "}"
		}' "$d/src/heldout.csv"
}
mcq 2 1 5 >"$d/mcq.json"
prep mcq egomcq "$d/mcq.json"
MQ=(--task egomcq --manifest "$d/mcq/manifest" --bench-file "$d/mcq.json")
tools/eval "${EV[@]}" "${MQ[@]}" >"$d/mcq_out.json"
cat "$d/mcq_out.json"
grep -q '"questions":2,"choices":5,"n_inter":2,"n_intra":0' "$d/mcq_out.json"
grep -q '"intra_video_acc":null' "$d/mcq_out.json"
a=$(field inter_video_acc "$d/mcq_out.json")
check "$a == 0 || $a == 0.5 || $a == 1"
# oracle: one choice per question is always the answer
mcq 0 2 1 >"$d/mcq_one.json"
prep mcq_one egomcq "$d/mcq_one.json"
tools/eval "${EV[@]}" --task egomcq --manifest "$d/mcq_one/manifest" --bench-file "$d/mcq_one.json" >"$d/one.json"
grep -q '"questions":2,"choices":1,"n_inter":0,"n_intra":2' "$d/one.json"
check "$(field intra_video_acc "$d/one.json") == 1"
sed 's/"types": 1/"types": 3/' "$d/mcq.json" >"$d/mcq_bad.json"
fails "mcq_bad.json:1: question 0: types is not 1 (inter-video) or 2" tools/eval "${EV[@]}" --task egomcq \
	--manifest "$d/mcq/manifest" --bench-file "$d/mcq_bad.json"
fails "the manifest has 2 samples, $d/mcq.json has 10 clips" tools/eval "${EV[@]}" --task egomcq --manifest "$d/ch/manifest" --bench-file "$d/mcq.json"

# ---- EK-100 CLS: EPIC_100_validation.csv of synth's clips (noun: the shape, verb: the action) ----
cls_csv() { # cls_csv ONE: synth's held-out clips as EPIC_100_validation.csv (ONE=1: every clip pair 0:0)
	echo "narration_id,participant_id,video_id,narration_timestamp,start_timestamp,stop_timestamp,start_frame,stop_frame,narration,verb,verb_class,noun,noun_class,all_nouns,all_noun_classes"
	tail -n +2 "$d/src/heldout.csv" | awk -F, -v one="$1" '{
		split($4, w, " "); verb = w[4] (w[5] ? " " w[5] : ""); noun = w[3]
		if (!(verb in V)) V[verb] = nv++
		if (!(noun in N)) N[noun] = nn++
		printf "v%d,P01,%s,%s,%s,%s,0,0,%s,%s,%d,%s,%d,[],[]\n", NR, $1, $2, $2, $3, $4, verb, one ? 0 : V[verb], noun, one ? 0 : N[noun]
	}'
}
cls_csv 0 >"$d/cls.csv"
{ # the train file adds pairs the validation clips do not have
	head -1 "$d/cls.csv"
	echo "t1,P02,P02_01,00:00:01.00,00:00:01.00,00:00:02.00,0,0,a blue star spins,spins,7,star,9,[],[]"
	echo "t2,P02,P02_01,00:00:03.00,00:00:03.00,00:00:04.00,0,0,a red star spins,spins,7,star,10,[],[]"
} >"$d/cls_train.csv"
prep cls ek100-cls "$d/cls.csv"
nv=$(($(wc -l <"$d/cls.csv") - 1))
CL=(--task ek100-cls --manifest "$d/cls/manifest" --bench-file "$d/cls.csv" --bench-aux "$d/cls_train.csv")
fails "--views is EGTEA's (ek100-cls takes one view)" tools/eval "${EV[@]}" "${CL[@]}" --frame-protocol midpoints --views 2x3
fails "ek100-cls needs --bench-aux EPIC_100_train.csv" tools/eval "${EV[@]}" "${CL[@]:0:6}" --frame-protocol midpoints
fails "ek100-cls: the benchmark's protocol takes 16 frames per clip, the model has 4" tools/eval "${EV[@]}" "${CL[@]}"
tools/eval "${EV[@]}" "${CL[@]}" --frame-protocol midpoints 2>/dev/null >"$d/cls.json"
cat "$d/cls.json"
pairs=$(tail -n +2 "$d/cls.csv" | cut -d, -f11,13 | sort -u | wc -l)
grep -q "\"task\":\"ek100-cls\",\"n\":$nv," "$d/cls.json"
grep -q "\"classes\":$((pairs + 2)),\"verbs\":8,\"nouns\":11,\"templates\":2" "$d/cls.json"
for k in action verb noun; do
	for m in top1 top5 mean_class_acc; do check "$(field ${k}_$m "$d/cls.json") >= 0 && $(field ${k}_$m "$d/cls.json") <= 1"; done
	check "$(field ${k}_top5 "$d/cls.json") >= $(field ${k}_top1 "$d/cls.json")"
done
tools/eval --init-seed 1 --frames 4 --quiet "${CL[@]}" --frame-protocol midpoints 2>/dev/null | grep -q 'verb   top-1'
# oracle: one pair in both files, so every clip's action, verb and noun are right
cls_csv 1 >"$d/cls_one.csv"
head -2 "$d/cls_one.csv" >"$d/cls_one_train.csv"
tools/eval "${EV[@]}" "${CL[@]/$d\/cls.csv/$d/cls_one.csv}" --bench-aux "$d/cls_one_train.csv" --frame-protocol midpoints \
	2>/dev/null >"$d/cls_one.json"
grep -q '"classes":1,"verbs":1,"nouns":1' "$d/cls_one.json"
for k in action_top1 verb_top1 noun_top1 action_mean_class_acc; do check "$(field $k "$d/cls_one.json") == 1"; done
sed '3s/,0,0,\([^,]*\),\([^,]*\),[0-9]*,/,0,0,\1,\2,x,/' "$d/cls.csv" >"$d/cls_bad.csv"
fails "cls_bad.csv:3: verb_class 'x'" tools/eval "${EV[@]}" "${CL[@]/$d\/cls.csv/$d/cls_bad.csv}" --frame-protocol midpoints
sed '1s/noun_class/noun_id/' "$d/cls_train.csv" >"$d/cls_train_bad.csv"
fails "cls_train_bad.csv:1: no column 'noun_class'" tools/eval "${EV[@]}" "${CL[@]/$d\/cls_train.csv/$d/cls_train_bad.csv}" \
	--frame-protocol midpoints
echo "eval benchmarks: ek100-mir, ek100-cls, charades-ego, egtea (midpoints and its 2x3 views), egomcq run on synth; oracles exact, bad files and views refused"
