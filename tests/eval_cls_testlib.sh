# Sourced by the tests of tools/eval --task probe|classify: synth's clips labelled with their colour
# (head label, plain in the pixels) and action (label2), prepared in DIR as train/ and heldout/, and
# one/ (the held-out clips with head 0 only); DIR/colours.txt and DIR/s/classes-action.txt name them.
# ecl_data DIR [synth flags...]: 0, or 1 with the failing step's output on stdout
ecl_data() {
	local d=$1 sp
	shift
	tools/synth --out "$d/s" "$@" --write-labels >"$d/synth.log" 2>&1 || { cat "$d/synth.log"; return 1; }
	awk -F, 'FNR > 1 { split($4, w, " "); print w[2] }' "$d/s/train.csv" "$d/s/heldout.csv" | sort -u >"$d/colours.txt"
	local P=(--video-root "$d/s/videos" --bpe tests/fixtures/bpe_tiny_merges.txt -j 2)
	for sp in train heldout; do
		awk -F, 'BEGIN { print "video,start,end,label,label2" }
			NR > 1 { n = split($4, w, " "); a = w[4]; for (i = 5; i <= n; i++) a = a " " w[i]
				printf "%s,%s,%s,%s,%s\n", $1, $2, $3, w[2], a }' "$d/s/$sp.csv" >"$d/$sp.csv"
		tools/prep --format labels-csv --classes "$d/colours.txt,$d/s/classes-action.txt" "${P[@]}" \
			--annotations "$d/$sp.csv" --out "$d/$sp" >"$d/prep.log" 2>&1 || { cat "$d/prep.log"; return 1; }
	done
	cut -d, -f1-4 "$d/heldout.csv" >"$d/one.csv" # one head only
	tools/prep --format labels-csv --classes "$d/colours.txt" "${P[@]}" --annotations "$d/one.csv" --out "$d/one" \
		>"$d/prep.log" 2>&1 || { cat "$d/prep.log"; return 1; }
}
