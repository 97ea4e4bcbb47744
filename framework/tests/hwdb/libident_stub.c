/* SPDX-License-Identifier: MIT */
/*
 * Another libexpat.so.1: the same soname and the three functions the
 * README's quick start (ci/quickstart-c/gate.c) calls, built here, from no
 * package, doing other work (one calloc, no malloc; a scan for '<' instead
 * of a parse).  test_libraries.py puts it
 * first with LD_LIBRARY_PATH, as an upgraded library would be.
 */
#include <stdlib.h>

#include <expat.h>

struct XML_ParserStruct {
	int tags;
};

XML_Parser XML_ParserCreate(const XML_Char *encoding)
{
	(void)encoding;
	return calloc(1, sizeof(struct XML_ParserStruct));
}

enum XML_Status XML_Parse(XML_Parser p, const char *s, int len, int final)
{
	(void)final;
	for (int i = 0; i < len; i++)
		p->tags += s[i] == '<';
	return XML_STATUS_OK;
}

void XML_ParserFree(XML_Parser p)
{
	free(p);
}
