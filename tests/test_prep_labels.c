// Labelled annotation files (tools/prep_labels.c) on small hand-written files: EK-100's train CSV
// (verb_class, noun_class, the narration as caption), labels-csv with and without a header, by id
// and by --classes name, Kinetics with its split filter, sorted class numbering and the trimmed
// clip file rule; and each refusal, naming file and line: a missing column, a wrong number of
// fields, a non-integer or out-of-range class id, an unknown class name, a clip that ends before
// it starts.
#include "../tools/prep_labels.h" // defines: prep_labels_load, PrepLabelOpts

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int fails;
#define CHECK(c)                                                                                                       \
	do {                                                                                                           \
		if (!(c)) {                                                                                            \
			printf("FAIL line %d: %s\n", __LINE__, #c);                                                    \
			fails++;                                                                                       \
		}                                                                                                      \
	} while (0)

static char dir[] = "/tmp/test_prep_labels_XXXXXX";

static const char *write_file(const char *name, const char *text)
{
	static char path[8][512];
	static int k;
	char *p = path[k++ % 8];
	snprintf(p, 512, "%s/%s", dir, name);
	FILE *f = fopen(p, "wb");
	fputs(text, f);
	fclose(f);
	return p;
}

static int clip_is(const PrepAnnot *a, const char *video, double s, double e, const char *cap, int l0, int l1)
{
	int ok = !strcmp(a->video, video) && fabs(a->start - s) < 1e-6 &&
		 (isinf(e) ? isinf(a->end) : fabs(a->end - e) < 1e-6) && !strcmp(a->caption, cap) &&
		 a->label[0] == l0 && a->label[1] == l1;
	if (!ok)
		printf("  got %s %.3f-%.3f '%s' labels %d %d\n", a->video, a->start, a->end, a->caption, a->label[0],
		       a->label[1]);
	return ok;
}

// the file is refused (-EBADMSG) with a reason holding want (file:line and what)
static void refused(const char *what, const char *path, const char *format, const PrepLabelOpts *o, const char *want)
{
	PrepAnnotList l;
	int rc = prep_labels_load(&l, path, format, o);
	const char *got = l.n_problems ? l.problems[l.n_problems - 1] : "";
	if (rc != -EBADMSG || !strstr(got, want)) {
		printf("FAIL %s: rc %d, '%s' (want -EBADMSG with '%s')\n", what, rc, got, want);
		fails++;
	} else {
		printf("refused, %s: %s\n", what, got);
	}
	prep_annot_free(&l);
}

static const char ek_head[] =
	"narration_id,participant_id,video_id,narration_timestamp,start_timestamp,stop_timestamp,"
	"start_frame,stop_frame,narration,verb,verb_class,noun,noun_class,all_nouns,all_noun_classes\n";

static void ek100(void)
{
	char text[2048];
	snprintf(
		text, sizeof text,
		"%sP01_01_0,P01,P01_01,00:00:01.089,00:00:00.14,00:00:03.37,8,202,open door,open,3,door,8,['door'],[8]\n"
		"P01_01_1,P01,P01_01,00:00:02.629,00:00:04.37,00:00:06.17,262,370,turn on light,turn-on,6,light,"
		"114,\"['light', 'switch']\",\"[114, 299]\"\n"
		"P02_03_9,P02,P02_03,00:01:00.00,00:01:00.50,00:01:02.00,0,0,wash cup,wash,96,cup,299,['cup'],[299]\n",
		ek_head);
	PrepAnnotList l;
	CHECK(prep_labels_load(&l, write_file("ek.csv", text), "ek100-train", NULL) == 0);
	CHECK(l.n == 3 && l.heads.n == 2 && !strcmp(l.heads.name[0], "verb") && !strcmp(l.heads.name[1], "noun"));
	CHECK(l.heads.n_classes[0] == 97 && l.heads.n_classes[1] == 300 && !l.heads.class_names[0]);
	CHECK(l.n == 3 && clip_is(&l.a[0], "P01_01", 0.14, 3.37, "open door", 3, 8));
	CHECK(l.n == 3 && clip_is(&l.a[1], "P01_01", 4.37, 6.17, "turn on light", 6, 114));
	CHECK(l.n == 3 && clip_is(&l.a[2], "P02_03", 60.5, 62, "wash cup", 96, 299));
	prep_annot_free(&l);
	// --classes names the ids (the fields stay ids)
	const char *verbs = write_file("verbs.txt", "take\nput\nwash\nopen\n");
	PrepLabelOpts named = {.classes = verbs, .num_classes = "4,300"};
	snprintf(text, sizeof text, "%sP01_01_0,P01,P01_01,0,0.5,1.5,0,0,open tap,open,3,tap,7,['tap'],[7]\n", ek_head);
	CHECK(prep_labels_load(&l, write_file("ek_named.csv", text), "ek100-train", &named) == 0);
	CHECK(l.n == 1 && l.heads.n_classes[0] == 4 && l.heads.class_names[0] &&
	      !strcmp(l.heads.class_names[0][3], "open"));
	CHECK(l.n == 1 && clip_is(&l.a[0], "P01_01", 0.5, 1.5, "open tap", 3, 7));
	prep_annot_free(&l);

	// EPIC's own class CSVs name both heads: the verb file as the annotations repository has it, the
	// noun file quoted throughout as its v2
	const char *epic = write_file(
		"EPIC_100_verb_classes.csv",
		"id,key,instances,category\n0,take,\"['take', 'grab', 'pick-up']\",retrieve\n1,put,\"['put', 'place']\",leave\n"
		"2,wash,\"['wash', 'rinse']\",clean\n3,open,['open'],access\n");
	const char *epic_n = write_file(
		"EPIC_100_noun_classes.csv",
		"\"id\",\"key\",\"instances\",\"category\"\n0,\"tap\",\"['tap', 'tap:water']\",\"appliances\"\n"
		"1,\"board:chopping\",\"['board:chopping']\",\"utensils\"\n");
	char both_epic[512];
	snprintf(both_epic, sizeof both_epic, "%s,%s", epic, epic_n);
	PrepLabelOpts official = {.classes = both_epic};
	snprintf(text, sizeof text, "%sP01_01_0,P01,P01_01,0,0.5,1.5,0,0,open tap,open,3,tap,0,['tap'],[0]\n", ek_head);
	CHECK(prep_labels_load(&l, write_file("ek_epic.csv", text), "ek100-train", &official) == 0);
	CHECK(l.n == 1 && l.heads.n_classes[0] == 4 && l.heads.n_classes[1] == 2 && l.heads.class_names[1] &&
	      !strcmp(l.heads.class_names[0][3], "open") && !strcmp(l.heads.class_names[1][1], "board:chopping"));
	prep_annot_free(&l);
	refused("an EPIC class CSV with an id out of order", write_file("ek_x.csv", text), "ek100-train",
		&(PrepLabelOpts){.classes = write_file(
					 "bad_verbs.csv",
					 "id,key,instances,category\n0,take,['take'],retrieve\n2,put,['put'],leave\n")},
		"bad_verbs.csv:3: id '2', expected 1");

	snprintf(text, sizeof text, "%sP01_01_0,P01,P01_01,0,0.5,1.5,0,0,x,open,97,tap,7,[],[]\n", ek_head);
	refused("ek100 verb 97", write_file("ek_v97.csv", text), "ek100-train", NULL,
		"ek_v97.csv:2: class id 97 of head 0 is outside its 97 classes");
	snprintf(text, sizeof text, "%sP01_01_0,P01,P01_01,0,0.5,1.5,0,0,x,open,3,tap,300,[],[]\n", ek_head);
	refused("ek100 noun 300", write_file("ek_n300.csv", text), "ek100-train", NULL, ":2: class id 300 of head 1");
	snprintf(text, sizeof text, "%sP01_01_0,P01,P01_01,0,0.5,1.5,0,0,x,open,three,tap,3,[],[]\n", ek_head);
	refused("ek100 verb not an id", write_file("ek_word.csv", text), "ek100-train", NULL,
		":2: class id 'three' is not an integer");
	snprintf(text, sizeof text, "%sP01_01_0,P01,P01_01,0,0.5,1.5,0,0,x,open,-1,tap,3,[],[]\n", ek_head);
	refused("ek100 negative verb", write_file("ek_neg.csv", text), "ek100-train", NULL,
		":2: class id '-1' is not an integer from 0");
	refused("ek100 without noun_class",
		write_file("ek_nocol.csv", "narration_id,video_id,start_timestamp,"
					   "stop_timestamp,narration,verb_class\na,P01,0,1,x,3\n"),
		"ek100-train", NULL, "ek_nocol.csv:1: no column 'noun_class'");
	snprintf(text, sizeof text, "%sP01_01_0,P01,P01_01,0,00:00:02.00,00:00:01.00,0,0,x,open,3,tap,3,[],[]\n",
		 ek_head);
	refused("ek100 end before start", write_file("ek_time.csv", text), "ek100-train", NULL,
		"ek_time.csv:2: the clip ends (1.000 s) before it starts (2.000 s)");
	snprintf(text, sizeof text, "%sP01_01_0,P01,P01_01,0,0.5,1.5,0,0,x,open,3,tap,3\n", ek_head);
	refused("ek100 short row", write_file("ek_short.csv", text), "ek100-train", NULL,
		"ek_short.csv:2: 13 fields, the header has 15");
}

static void labels_csv(void)
{
	PrepAnnotList l;
	// no header, two heads by id; the class counts from --num-classes
	const char *p = write_file("two.csv", "a,0,2.5,3,1\nb,1,4,0,\n");
	PrepLabelOpts counts = {.num_classes = "5,2"};
	CHECK(prep_labels_load(&l, p, "labels-csv", &counts) == 0);
	CHECK(l.n == 2 && l.heads.n == 2 && l.heads.n_classes[0] == 5 && l.heads.n_classes[1] == 2);
	CHECK(l.n == 2 && clip_is(&l.a[0], "a", 0, 2.5, "", 3, 1) && clip_is(&l.a[1], "b", 1, 4, "", 0, -1));
	prep_annot_free(&l);
	// without --num-classes: the largest id + 1
	CHECK(prep_labels_load(&l, p, "labels-csv", NULL) == 0);
	CHECK(l.heads.n_classes[0] == 4 && l.heads.n_classes[1] == 2);
	prep_annot_free(&l);
	// a header (any column order, a caption column) and class names
	const char *cls = write_file("actions.txt", "jump\nwave\r\nsit\n");
	PrepLabelOpts named = {.classes = cls};
	p = write_file("named.csv", "end,video,label,start\n3,v1,wave,1\n00:00:09,v2,jump,00:00:05\n");
	CHECK(prep_labels_load(&l, p, "labels-csv", &named) == 0);
	CHECK(l.n == 2 && l.heads.n == 1 && l.heads.n_classes[0] == 3 && !strcmp(l.heads.name[0], "label"));
	CHECK(l.n == 2 && clip_is(&l.a[0], "v1", 1, 3, "wave", 1, -1) && clip_is(&l.a[1], "v2", 5, 9, "jump", 0, -1));
	CHECK(l.heads.class_names[0] && !strcmp(l.heads.class_names[0][2], "sit"));
	prep_annot_free(&l);
	p = write_file("cap.csv", "video,start,end,label,caption\nv1,0,1,2,a person sits\n");
	CHECK(prep_labels_load(&l, p, "labels-csv", &named) == -EBADMSG); // names expected, "2" is none
	prep_annot_free(&l);
	CHECK(prep_labels_load(&l, p, "labels-csv", NULL) == 0);
	CHECK(l.n == 1 && clip_is(&l.a[0], "v1", 0, 1, "a person sits", 2, -1));
	prep_annot_free(&l);

	refused("unknown class name", write_file("unk.csv", "v1,0,1,wave\nv1,1,2,dance\n"), "labels-csv", &named,
		"unk.csv:2: unknown class name 'dance'");
	refused("id past --num-classes", write_file("big.csv", "v1,0,1,4,0\nv1,1,2,5,1\n"), "labels-csv", &counts,
		"big.csv:2: class id 5 of head 0 is outside its 5 classes");
	refused("not an id", write_file("nan.csv", "v1,0,1,1.5\n"), "labels-csv", NULL,
		"nan.csv:1: class id '1.5' is not an integer");
	refused("negative id", write_file("neg.csv", "v1,0,1,-3\n"), "labels-csv", NULL, "neg.csv:1: class id '-3'");
	refused("missing label column", write_file("nolabel.csv", "video,start,end,caption\nv1,0,1,x\n"), "labels-csv",
		NULL, "nolabel.csv:1: no column 'label'");
	refused("row of the wrong length", write_file("ragged.csv", "video,start,end,label\nv1,0,1,2\nv1,1,2\n"),
		"labels-csv", NULL, "ragged.csv:3: 3 fields, the header has 4");
	refused("first record of 3 fields", write_file("three.csv", "v1,0,1\n"), "labels-csv", NULL,
		"three.csv:1: 3 fields, want video,start,end,label[,label2]");
	refused("end before start", write_file("back.csv", "v1,0,1,0\nv1,5,4,0\n"), "labels-csv", NULL,
		"back.csv:2: the clip ends (4.000 s) before it starts (5.000 s)");
	refused("bad time", write_file("when.csv", "v1,soon,1,0\n"), "labels-csv", NULL, "when.csv:1: times 'soon'");
	char both[1200];
	snprintf(both, sizeof both, "%s,%s", cls, cls);
	refused("classes for another head count", write_file("one.csv", "v1,0,1,wave\n"), "labels-csv",
		&(PrepLabelOpts){.classes = both}, "2 lists for the file's 1 label heads");
	refused("an empty class name", write_file("one2.csv", "v1,0,1,wave\n"), "labels-csv",
		&(PrepLabelOpts){.classes = write_file("gap.txt", "jump\n\nsit\n")}, "gap.txt:2: an empty class name");
	refused("a repeated class name", write_file("one3.csv", "v1,0,1,wave\n"), "labels-csv",
		&(PrepLabelOpts){.classes = write_file("rep.txt", "jump\nsit\njump\n")},
		"rep.txt:3: class name 'jump' repeats line 1");
}

static void kinetics(void)
{
	char root[600], clip[700];
	snprintf(root, sizeof root, "%s/k400", dir);
	mkdir(root, 0755);
	snprintf(clip, sizeof clip, "%s/abc_000010_000020.mp4", root); // the trimmed file of one row
	fclose(fopen(clip, "wb"));
	const char *p = write_file("k.csv", "label,youtube_id,time_start,time_end,split\n"
					    "riding a bike,abc,10,20,train\n"
					    "\"abseiling\",def,0,10,train\n"
					    "juggling,ghi,5,15,val\n"
					    "abseiling,jkl,30,40,val\n");
	PrepLabelOpts o = {.split = "train", .video_root = root};
	PrepAnnotList l;
	CHECK(prep_labels_load(&l, p, "kinetics", &o) == 0);
	// classes: the file's names sorted (abseiling 0, juggling 1, riding a bike 2), every split
	CHECK(l.heads.n == 1 && l.heads.n_classes[0] == 3 && l.heads.class_names[0] &&
	      !strcmp(l.heads.class_names[0][1], "juggling"));
	CHECK(l.n == 2 && clip_is(&l.a[0], "abc_000010_000020", 0, INFINITY, "riding a bike", 2, -1));
	CHECK(l.n == 2 && clip_is(&l.a[1], "def", 0, 10, "abseiling", 0, -1));
	prep_annot_free(&l);
	o.split = NULL; // every row
	CHECK(prep_labels_load(&l, p, "kinetics", &o) == 0);
	CHECK(l.n == 4 && clip_is(&l.a[3], "jkl", 30, 40, "abseiling", 0, -1));
	prep_annot_free(&l);
	// --classes gives the numbering (the validation file gets the training file's)
	o.classes = write_file("k_classes.txt", "riding a bike\njuggling\nabseiling\ndancing\n");
	o.split = "val";
	CHECK(prep_labels_load(&l, p, "kinetics", &o) == 0);
	CHECK(l.n == 2 && l.heads.n_classes[0] == 4 && clip_is(&l.a[0], "ghi", 5, 15, "juggling", 1, -1));
	prep_annot_free(&l);
	refused("kinetics unknown class",
		write_file("k_unk.csv", "label,youtube_id,time_start,time_end,split\n"
					"juggling,a,0,1,val\nsurfing,b,0,1,val\n"),
		"kinetics", &o, "k_unk.csv:3: unknown class name 'surfing'");
	refused("kinetics without split column",
		write_file("k_nosplit.csv", "label,youtube_id,time_start,time_end\n"
					    "juggling,a,0,1\n"),
		"kinetics", NULL, "k_nosplit.csv:1: no column 'split'");
	refused("kinetics end before start",
		write_file("k_time.csv", "label,youtube_id,time_start,time_end,split\n"
					 "juggling,a,9,3,train\n"),
		"kinetics", NULL, "k_time.csv:2: the clip ends (3.000 s) before it starts (9.000 s)");
	refused("kinetics bad time",
		write_file("k_t.csv", "label,youtube_id,time_start,time_end,split\n"
				      "juggling,a,x,3,train\n"),
		"kinetics", NULL, "k_t.csv:2: times 'x'");
	refused("kinetics extra field",
		write_file("k_f.csv", "label,youtube_id,time_start,time_end,split\n"
				      "juggling,a,0,3,train,extra\n"),
		"kinetics", NULL, "k_f.csv:2: 6 fields, the header has 5");
	remove(clip), rmdir(root);
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	PrepAnnotList l;
	CHECK(prep_labels_load(&l, "x.csv", "csv", NULL) == 1); // not a labelled format: untouched
	ek100();
	labels_csv();
	kinetics();
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		return 1;
	printf("%s\n", fails ? "FAIL" : "ok");
	return fails ? 1 : 0;
}
