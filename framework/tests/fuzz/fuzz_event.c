/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the event-string parser, single events and lists,
 * against a fixture sysfs tree (made once, under /tmp) so that the PMU forms
 * reach their format fields, aliases and value widths.  Findings: a crash, a
 * sanitizer report, a refusal without a message, a position outside the
 * input, or a generic event whose canonical name does not parse back to the
 * same attributes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pmcheck/pmcheck.h>

#include "../fixture.h"


int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static char root[] = "/tmp/pmc-fuzz-sysfs-XXXXXX";

	(void)argc;
	(void)argv;
	if (!mkdtemp(root))
		abort();
	t_put(root, "cpu/type", "4");
	t_put(root, "cpu/rdpmc", "1");
	t_put(root, "cpu/format/event", "config:0-7");
	t_put(root, "cpu/format/umask", "config:8-15");
	t_put(root, "cpu/format/inv", "config:23");
	t_put(root, "cpu/format/cmask", "config:24-31");
	t_put(root, "cpu/format/split", "config:0-3,32-35");
	t_put(root, "cpu/format/ldlat", "config1:0-15");
	t_put(root, "cpu/events/mem-loads", "event=0xcd,umask=0x1,ldlat=3");
	t_put(root, "cpu/events/needs-param", "event=0x3c,umask=?");
	t_put(root, "armv8_pmuv3/type", "8");
	t_put(root, "armv8_pmuv3/cpus", "0-3");
	t_put(root, "armv8_pmuv3/format/event", "config:0-15");
	t_put(root, "software/type", "1");
	t_put(root, "breakpoint/type", "5");
	t_put(root, "uprobe/type", "7");
	t_put(root, "uprobe/format/retprobe", "config:0");
	t_put(root, "msr/type", "9");
	t_put(root, "msr/format/event", "config:0-63");
	t_put(root, "msr/events/tsc", "event=0x00");
	t_put(root, "bad/type", "10");
	t_put(root, "bad/format/event", "config0-7");
	pmc_event_set_sysfs_root(root);
	return 0;
}

static void check_refusal(int rc, const struct pmc_error *err, size_t len)
{
	if (rc >= 0 || err->code != rc || !err->message[0])
		abort(); /* a refusal always says why */
	if (err->position < -1 || (err->position >= 0 && (size_t)err->position > len))
		abort(); /* a position lies inside the input */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pmc_event_spec specs[PMC_MAX_EVENTS], again;
	struct pmc_error err;
	char *text;
	size_t n;
	int rc;

	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	rc = pmc_event_parse(text, &specs[0], &err);
	if (rc)
		check_refusal(rc, &err, strlen(text));
	else if ((specs[0].kind == PMC_KIND_HARDWARE || specs[0].kind == PMC_KIND_SOFTWARE ||
		  specs[0].kind == PMC_KIND_CACHE || specs[0].kind == PMC_KIND_RAW) &&
		 (pmc_event_parse(specs[0].name, &again, &err) != 0 || again.type != specs[0].type ||
		  again.config != specs[0].config ||
		  again.exclude_user != specs[0].exclude_user ||
		  again.exclude_kernel != specs[0].exclude_kernel ||
		  again.precise_ip != specs[0].precise_ip))
		abort(); /* the canonical name means the same event */
	rc = pmc_event_parse_list(text, specs, PMC_MAX_EVENTS, &n, &err);
	if (rc)
		check_refusal(rc, &err, strlen(text));
	else if (n == 0 || n > PMC_MAX_EVENTS)
		abort();
	free(text);
	return 0;
}
