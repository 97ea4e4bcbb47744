/* SPDX-License-Identifier: MIT */
/*
 * The bottom of the records layer: reading a string out of a JSON object,
 * the file part of a path, and writing a JSON document atomically.  It
 * calls nothing of the harness; result.c, result_read.c, provenance.c,
 * report.c and compare.c call it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "harness_int.h"

const char *pmc__file_part(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

const char *pmc__jstr(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

int pmc__write_json(const char *path, json_t *doc)
{
	char *text = json_dumps(doc, JSON_INDENT(2));
	size_t len;
	int rc;

	if (!text)
		return -ENOMEM;
	len = strlen(text);
	text[len] = '\0';
	{
		char *t2 = realloc(text, len + 2);

		if (t2) {
			text = t2;
			text[len++] = '\n';
			text[len] = '\0';
		}
	}
	rc = pmc_write_file_atomic(path, text, len);
	free(text);
	return rc;
}
