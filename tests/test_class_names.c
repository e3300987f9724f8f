// Class lists (tools/class_names.c): one name per line, strict (prep) and lenient (eval's prompts),
// and EPIC-KITCHENS-100's id,key,instances,category CSVs (quoted or not, lists with commas inside
// quotes); each damaged variant refused naming file:line and the reason.
#include "../tools/class_names.h" // defines: ClassNames, class_names_parse, class_names_free
#include "testutil.h"             // defines: CHECK, CHECK_OK, CHECK_EQ_INT

#include <errno.h>  // defines: EINVAL
#include <stdio.h>  // defines: printf
#include <string.h> // defines: strcmp, strlen, strstr

static char err[512];

static ClassNames ok(const char *text, int strict, int n)
{
	ClassNames c;
	int rc = class_names_parse(&c, text, strlen(text), "c.txt", strict, err, sizeof err);
	if (rc || c.n != n) {
		fprintf(stderr, "FAIL: '%s' (strict %d): rc %d, %d names (want %d): %s\n", text, strict, rc,
			rc ? 0 : c.n, n, err);
		exit(1);
	}
	return c;
}

static void bad(const char *text, int strict, const char *want)
{
	ClassNames c;
	int rc = class_names_parse(&c, text, strlen(text), "c.txt", strict, err, sizeof err);
	if (rc != -EINVAL || !strstr(err, want)) {
		fprintf(stderr, "FAIL: '%s' (strict %d): rc %d '%s', want -EINVAL with '%s'\n", text, strict, rc, err,
			want);
		exit(1);
	}
	printf("refused: %s\n", err);
}

static const char verbs[] = "id,key,instances,category\n"
			    "0,take,\"['collect-from', 'get', 'grab']\",retrieve\n"
			    "1,put,\"['lay', 'place', 'put-down']\",leave\n"
			    "2,knead,['knead'],manipulate\n"
			    "3,turn-on,\"['activate', 'switch-on']\",access\n";
static const char nouns_v2[] = "\"id\",\"key\",\"instances\",\"category\"\r\n"
			       "0,\"tap\",\"['tap', 'tap:water']\",\"appliances\"\r\n"
			       "1,\"board:chopping\",\"['board:chopping', 'board']\",\"utensils\"\r\n"
			       "2,\"liquid:washing\",\"['soap', 'detergent']\",\"cleaning equipment and material\"\r\n";

int main(void)
{
	ClassNames c = ok("open\nclose\nturn on\r\n", 1, 3);
	CHECK(!strcmp(c.names[2], "turn on") && !c.epic);
	class_names_free(&c);
	c = ok("\xef\xbb\xbfopen\nclose", 1, 2); // a byte order mark; no newline at the end
	CHECK(!strcmp(c.names[0], "open") && !strcmp(c.names[1], "close"));
	class_names_free(&c);
	bad("open\n\nclose\n", 1, "c.txt:2: an empty class name");
	bad("open\n close\n", 1, "c.txt:2: class name ' close' begins or ends with a blank");
	bad("open\nclose\t\n", 1, "c.txt:2: class name 'close\t' begins or ends with a blank");
	bad("open\nclose\nopen\n", 1, "c.txt:3: class name 'open' repeats line 1");
	bad("", 1, "c.txt: no class names");
	// lenient: blanks around names, blank lines and comments dropped; repeats still refused
	c = ok("# verbs\n  open \n\n\tclose\n", 0, 2);
	CHECK(!strcmp(c.names[0], "open") && !strcmp(c.names[1], "close"));
	class_names_free(&c);
	bad("# verbs\nopen\n\nopen\n", 0, "c.txt:4: class name 'open' repeats line 2");
	bad("# nothing\n\n", 0, "c.txt: no class names");

	// EPIC's class CSVs: the key names class id, in both strictnesses
	for (int strict = 0; strict < 2; strict++) {
		c = ok(verbs, strict, 4);
		CHECK(c.epic && !strcmp(c.names[0], "take") && !strcmp(c.names[2], "knead") &&
		      !strcmp(c.names[3], "turn-on"));
		class_names_free(&c);
		c = ok(nouns_v2, strict, 3);
		CHECK(c.epic && !strcmp(c.names[1], "board:chopping") && !strcmp(c.names[2], "liquid:washing"));
		class_names_free(&c);
	}
	bad("id,key,instances,category\n0,take,['take'],retrieve\n2,put,['put'],leave\n", 1,
	    "c.txt:3: id '2', expected 1");
	bad("id,key,instances,category\n1,take,['take'],retrieve\n", 1, "c.txt:2: id '1', expected 0");
	bad("id,key,instances,category\n0,take,['take'],retrieve,extra\n", 1,
	    "c.txt:2: 5 fields, EPIC's class CSV has 4");
	bad("id,key,instances,category\n0,take,['take']\n", 1, "c.txt:2: 3 fields");
	bad("id,key,instances,category\n0,,['take'],retrieve\n", 1, "c.txt:2: key '' is empty");
	bad("id,key,instances,category\n0,\" take\",['take'],retrieve\n", 1,
	    "c.txt:2: key ' take' is empty, has a line break or blanks");
	bad("id,key,instances,category\n0,take,take,retrieve\n", 1, "c.txt:2: instances 'take' are not a list");
	bad("id,key,instances,category\n0,take,['take'],\n", 1, "c.txt:2: no category");
	bad("id,key,instances,category\n0,take,['take'],a\n1,take,['get'],b\n", 1,
	    "c.txt:3: class name 'take' repeats line 2");
	bad("id,key,instances,category\n0,x1,['take'],a\n+1,x2,['a'],b\n", 1, "c.txt:3: id '+1', expected 1");
	bad("id,key,instances,category\n0,take,\"['take'],a\n", 1, "c.txt:2: a quoted field is not closed");
	bad("id,key,instances,category\n", 1, "c.txt: no class names");
	// a header of other columns is a name per line (and then a strict list)
	c = ok("id,key,category\n", 1, 1);
	CHECK(!c.epic);
	class_names_free(&c);
	printf("class lists: one a line (strict and lenient), EPIC's class CSVs; 19 refusals\n");
	return 0;
}
