/* SPDX-License-Identifier: MIT */
/*
 * Conformance: the records a task's life writes (FORK, EXIT, COMM with
 * comm_exec, MMAP2 with inode or build ID, MMAP of data), the sample
 * fields that need more than a counter (user and interrupt registers, the
 * user stack, weight, data source), their errors, and the ring's own
 * rules (mapping twice, sizes, the backward ring).
 */
#include "conf.h"

#include <elf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

/* A dummy event of this thread, enabled, whose records (flags: attr.task,
 * comm, mmap...) go to a ring; inherited to children when `inherit` (its
 * output then redirected to a holder's ring: an inherited per-task event
 * cannot be mapped itself).  Returns the ring; *fds the descriptors. */
struct watcher {
	int fd, holder;
	struct pmc_ring *ring;
};

static void watch(struct pmc_test *t, struct watcher *w, void (*set)(struct perf_event_attr *),
		  int inherit)
{
	struct perf_event_attr a;

	sw_attr(&a, PERF_COUNT_SW_DUMMY);
	a.sample_id_all = 1;
	a.sample_type = PERF_SAMPLE_TID;
	a.exclude_kernel = 1;
	set(&a);
	w->holder = -1;
	if (inherit) {
		struct perf_event_attr h;

		sw_attr(&h, PERF_COUNT_SW_DUMMY);
		h.exclude_kernel = 1;
		w->holder = OPEN(t, &h, 0, -1, -1, 0);
		w->ring = conf_map_ring(t, w->holder, 16);
		a.inherit = 1;
		w->fd = OPEN(t, &a, 0, -1, -1, 0);
		ioc(t, w->fd, PERF_EVENT_IOC_SET_OUTPUT, (unsigned long)w->holder);
	} else {
		w->fd = OPEN(t, &a, 0, -1, -1, 0);
		w->ring = conf_map_ring(t, w->fd, 16);
	}
	ioc(t, w->fd, PERF_EVENT_IOC_ENABLE, 0);
}

static void unwatch(struct watcher *w)
{
	pmc_ring_unmap(w->ring);
	close(w->fd);
	if (w->holder >= 0)
		close(w->holder);
}

/* The next record of `type` (header included) into buf; 0 when none. */
static size_t next_of(struct pmc_ring *ring, uint32_t type, void *buf, size_t size)
{
	size_t len;

	while (pmc_ring_next(ring, buf, size, &len) == 1)
		if (((struct perf_event_header *)buf)->type == type)
			return len;
	return 0;
}

/* ---- task records ------------------------------------------------------------------------ */

static void set_task(struct perf_event_attr *a)
{
	a->task = 1;
}

/* attr.task: "PERF_RECORD_FORK and PERF_RECORD_EXIT" records, each
 * { pid, ppid, tid, ptid, time }: a child's fork names this process as its
 * parent, and its exit names the child (the event inherited to it). */
CONF_TEST(records, fork_and_exit)
{
	struct { struct perf_event_header h; uint32_t pid, ppid, tid, ptid; uint64_t time; } *r;
	unsigned char buf[256];
	struct watcher w;
	pid_t child;
	int forks = 0, exits = 0;

	watch(t, &w, set_task, 1);
	child = fork();
	if (child == 0)
		_exit(0);
	waitpid(child, NULL, 0);
	ioc(t, w.fd, PERF_EVENT_IOC_DISABLE, 0);
	r = (void *)buf;
	while (pmc_ring_next(w.ring, buf, sizeof(buf), &(size_t){ 0 }) == 1) {
		if (r->h.type == PERF_RECORD_FORK && r->pid == (uint32_t)child) {
			PMC_CHECK_EQ(t, r->ppid, getpid());
			PMC_CHECK_EQ(t, r->tid, child);
			PMC_CHECK_EQ(t, r->ptid, gettid());
			forks++;
		} else if (r->h.type == PERF_RECORD_EXIT && r->pid == (uint32_t)child) {
			PMC_CHECK_EQ(t, r->ppid, getpid());
			exits++;
		}
	}
	PMC_CHECK_EQ(t, forks, 1);
	PMC_CHECK_EQ(t, exits, 1);
	unwatch(&w);
}

/* Without inherit the child carries no copy of the event, so its exit is
 * not recorded; the fork still is (it happens in this task). */
CONF_TEST(records, exit_needs_inherit)
{
	unsigned char buf[256];
	struct perf_event_header *h = (void *)buf;
	struct watcher w;
	int forks = 0, exits = 0;
	pid_t child;

	watch(t, &w, set_task, 0);
	child = fork();
	if (child == 0)
		_exit(0);
	waitpid(child, NULL, 0);
	ioc(t, w.fd, PERF_EVENT_IOC_DISABLE, 0);
	while (pmc_ring_next(w.ring, buf, sizeof(buf), &(size_t){ 0 }) == 1) {
		forks += h->type == PERF_RECORD_FORK;
		exits += h->type == PERF_RECORD_EXIT;
	}
	PMC_CHECK_EQ(t, forks, 1);
	PMC_CHECK_EQ(t, exits, 0);
	unwatch(&w);
}

static void set_comm_exec(struct perf_event_attr *a)
{
	a->comm = 1;
	a->comm_exec = 1;
}

/* attr.comm with comm_exec (Linux 3.16): a COMM record "with the
 * PERF_RECORD_MISC_COMM_EXEC bit set" when the name changes by exec, and
 * without it when it changes by prctl(PR_SET_NAME). */
CONF_TEST(records, comm_exec)
{
	struct { struct perf_event_header h; uint32_t pid, tid; char comm[16]; } *r;
	unsigned char buf[256];
	struct watcher w;
	pid_t child;
	int by_prctl = 0, by_exec = 0;

	conf_require_kernel(t, 3, 16, "comm_exec");
	if (access("/bin/true", X_OK) != 0)
		pmc_test_skip(t, "needs /bin/true to exec");
	watch(t, &w, set_comm_exec, 1);
	child = fork();
	if (child == 0) {
		prctl(PR_SET_NAME, "pmc-renamed");
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	waitpid(child, NULL, 0);
	ioc(t, w.fd, PERF_EVENT_IOC_DISABLE, 0);
	r = (void *)buf;
	while (next_of(w.ring, PERF_RECORD_COMM, buf, sizeof(buf))) {
		if (r->pid != (uint32_t)child)
			continue;
		if (!strcmp(r->comm, "pmc-renamed"))
			by_prctl += !(r->h.misc & PERF_RECORD_MISC_COMM_EXEC);
		else if (!strcmp(r->comm, "true"))
			by_exec += !!(r->h.misc & PERF_RECORD_MISC_COMM_EXEC);
	}
	PMC_CHECK_EQ(t, by_prctl, 1);
	PMC_CHECK_EQ(t, by_exec, 1);
	unwatch(&w);
}

/* ---- mapping records --------------------------------------------------------------------- */

struct mmap2_rec {
	struct perf_event_header h;
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	union {
		struct { uint32_t maj, min; uint64_t ino, ino_generation; };
		struct { uint8_t build_id_size, reserved[3]; uint8_t build_id[20]; };
	};
	uint32_t prot, flags;
	char filename[];
};

static void set_mmap2(struct perf_event_attr *a)
{
	a->mmap = 1;
	a->mmap2 = 1;
}

/* A file of `pages` pages to map, removed at once (the mapping keeps it). */
static int scratch_file(struct pmc_test *t, char *path, size_t size, size_t bytes)
{
	int fd;

	snprintf(path, size, "/tmp/pmc-conf-XXXXXX");
	fd = mkstemp(path);
	if (fd < 0 || ftruncate(fd, (off_t)bytes) != 0)
		pmc_test_fail(t, "scratch file: %s", strerror(errno));
	return fd;
}

/* attr.mmap2 (Linux 3.16): an executable mapping's MMAP2 record carries
 * the address, length, page offset, the file's device and inode, the
 * protection and flags, and the file name. */
CONF_TEST(records, mmap2_inode)
{
	long psize = sysconf(_SC_PAGESIZE);
	unsigned char buf[4096 + 256];
	struct mmap2_rec *r = (void *)buf;
	char path[64];
	struct watcher w;
	struct stat st;
	void *map;
	int fd, seen = 0;

	conf_require_kernel(t, 3, 16, "mmap2");
	fd = scratch_file(t, path, sizeof(path), 4 * (size_t)psize);
	fstat(fd, &st);
	watch(t, &w, set_mmap2, 0);
	map = mmap(NULL, 2 * (size_t)psize, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, psize);
	ioc(t, w.fd, PERF_EVENT_IOC_DISABLE, 0);
	unlink(path);
	if (map == MAP_FAILED)
		pmc_test_skip(t, "cannot map a file PROT_EXEC here (%s; /tmp mounted noexec?)",
			      strerror(errno));
	while (next_of(w.ring, PERF_RECORD_MMAP2, buf, sizeof(buf))) {
		if (r->addr != (uintptr_t)map)
			continue;
		seen++;
		PMC_CHECK_EQ(t, r->pid, getpid());
		PMC_CHECK_EQ(t, r->len, 2 * psize);
		PMC_CHECK_EQ(t, r->pgoff, psize);
		PMC_CHECK_EQ(t, r->maj, major(st.st_dev));
		PMC_CHECK_EQ(t, r->min, minor(st.st_dev));
		PMC_CHECK_EQ(t, r->ino, st.st_ino);
		PMC_CHECK_EQ(t, r->prot, PROT_READ | PROT_EXEC);
		PMC_CHECK(t, r->flags & MAP_PRIVATE);
		PMC_CHECK(t, !strcmp(r->filename, path));
	}
	PMC_CHECK_EQ(t, seen, 1);
	munmap(map, 2 * (size_t)psize);
	close(fd);
	unwatch(&w);
}

struct build_id {
	uint8_t id[20];
	size_t n;
};

static int own_build_id(struct dl_phdr_info *info, size_t size, void *data)
{
	struct build_id *b = data;

	(void)size;
	if (info->dlpi_name && info->dlpi_name[0])
		return 0; /* the main program only: the first entry */
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const unsigned char *p = (const void *)(info->dlpi_addr + ph->p_vaddr), *end;

		if (ph->p_type != PT_NOTE)
			continue;
		for (end = p + ph->p_memsz; p + sizeof(ElfW(Nhdr)) <= end;) {
			const ElfW(Nhdr) *nh = (const void *)p;
			const unsigned char *desc = p + sizeof(*nh) + ((nh->n_namesz + 3) & ~3u);

			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_descsz <= 20) {
				memcpy(b->id, desc, nh->n_descsz);
				b->n = nh->n_descsz;
				return 1;
			}
			p = desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
	return 1;
}

static void set_mmap2_build_id(struct perf_event_attr *a)
{
	set_mmap2(a);
	a->build_id = 1;
}

/* attr.build_id (Linux 5.12): MMAP2 carries the mapped ELF file's build ID
 * instead of device and inode, flagged PERF_RECORD_MISC_MMAP_BUILD_ID:
 * mapping this program's own file again gives its build ID, byte for byte. */
CONF_TEST(records, mmap2_build_id)
{
	unsigned char buf[4096 + 256];
	struct mmap2_rec *r = (void *)buf;
	struct build_id own = { { 0 }, 0 };
	struct watcher w;
	void *map;
	int fd, seen = 0;

	conf_require_kernel(t, 5, 12, "attr.build_id");
	dl_iterate_phdr(own_build_id, &own);
	if (!own.n)
		pmc_test_skip(t, "this program was linked without a build ID (--build-id)");
	fd = open("/proc/self/exe", O_RDONLY);
	watch(t, &w, set_mmap2_build_id, 0);
	map = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	ioc(t, w.fd, PERF_EVENT_IOC_DISABLE, 0);
	PMC_CHECK(t, map != MAP_FAILED);
	while (next_of(w.ring, PERF_RECORD_MMAP2, buf, sizeof(buf))) {
		if (r->addr != (uintptr_t)map)
			continue;
		seen++;
		PMC_CHECK(t, r->h.misc & PERF_RECORD_MISC_MMAP_BUILD_ID);
		PMC_CHECK_EQ(t, r->build_id_size, own.n);
		PMC_CHECK(t, !memcmp(r->build_id, own.id, own.n));
	}
	PMC_CHECK_EQ(t, seen, 1);
	munmap(map, 4096);
	close(fd);
	unwatch(&w);
}

static void set_mmap_data(struct perf_event_attr *a)
{
	a->mmap = 1;
	a->mmap_data = 1;
}

static void set_mmap_only(struct perf_event_attr *a)
{
	a->mmap = 1;
}

/* Does a watcher made by `set` see a PERF_RECORD_MMAP of a non-executable
 * file mapping?  Returns how many, with *misc the last one's misc. */
static int data_mmaps(struct pmc_test *t, void (*set)(struct perf_event_attr *), uint16_t *misc)
{
	unsigned char buf[4096 + 256];
	struct { struct perf_event_header h; uint32_t pid, tid; uint64_t addr, len, pgoff; char filename[]; } *r = (void *)buf;
	char path[64];
	struct watcher w;
	void *map;
	int fd = scratch_file(t, path, sizeof(path), 4096), n = 0;

	watch(t, &w, set, 0);
	map = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	ioc(t, w.fd, PERF_EVENT_IOC_DISABLE, 0);
	unlink(path);
	while (next_of(w.ring, PERF_RECORD_MMAP, buf, sizeof(buf)))
		if (r->addr == (uintptr_t)map && !strcmp(r->filename, path)) {
			n++;
			*misc = r->h.misc;
		}
	munmap(map, 4096);
	close(fd);
	unwatch(&w);
	return n;
}

/* attr.mmap_data: "the mmap data ... of non-executable mappings" as MMAP
 * records flagged PERF_RECORD_MISC_MMAP_DATA; attr.mmap alone records
 * executable mappings only. */
CONF_TEST(records, mmap_data)
{
	uint16_t misc = 0;

	PMC_CHECK_EQ(t, data_mmaps(t, set_mmap_only, &misc), 0);
	PMC_CHECK_EQ(t, data_mmaps(t, set_mmap_data, &misc), 1);
	PMC_CHECK(t, misc & PERF_RECORD_MISC_MMAP_DATA);
}

/* ---- sample fields ----------------------------------------------------------------------- */

/* The stack pointer's and the instruction pointer's bits in
 * sample_regs_user (asm/perf_regs.h). */
#if defined(__x86_64__)
#define REG_SP 7
#define REG_IP 8
#define REG_BAD (1ull << 12)  /* DS: not sampled on x86-64 (REG_NOSUPPORT) */
#elif defined(__aarch64__)
#define REG_SP 31
#define REG_IP 32
#define REG_BAD (1ull << 40)  /* past PERF_REG_ARM64_MAX */
#endif

/* One breakpoint sample of `type` (sample_period 1, one write), decoded. */
static void one_sample(struct pmc_test *t, struct perf_event_attr *a, struct pmc_sample_layout *lay,
		       struct pmc_sample *s, unsigned char *buf, size_t size)
{
	struct pmc_error err;
	struct pmc_ring *ring;
	size_t len;
	int fd = OPEN(t, a, 0, -1, -1, 0);

	ring = conf_map_ring(t, fd, 8);
	ioc(t, fd, PERF_EVENT_IOC_ENABLE, 0);
	conf_fire(1);
	ioc(t, fd, PERF_EVENT_IOC_DISABLE, 0);
	len = next_of(ring, PERF_RECORD_SAMPLE, buf, size);
	if (!len)
		pmc_test_fail(t, "no sample");
	if (pmc_sample_parse(buf, len, lay, s, &err))
		pmc_test_fail(t, "%s", err.message);
	pmc_ring_unmap(ring);
	close(fd);
}

static void sample_bp(struct pmc_test *t, struct perf_event_attr *a, uint64_t type)
{
	conf_source_attr(t, a);
	a->sample_period = 1;
	a->sample_type = type;
}

/* PERF_SAMPLE_REGS_USER: "the current user-level CPU register state", the
 * registers sample_regs_user selects, with the ABI; SP is this thread's
 * stack and IP the sample's. */
CONF_TEST(sample, regs_user)
{
#ifdef REG_SP
	struct pmc_sample_layout lay = { .sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_REGS_USER,
					 .sample_regs_user = (1ull << REG_SP) | (1ull << REG_IP) };
	struct perf_event_attr a;
	unsigned char buf[512];
	struct pmc_sample s;
	uint64_t here = (uintptr_t)&a;

	sample_bp(t, &a, lay.sample_type);
	a.sample_regs_user = lay.sample_regs_user;
	one_sample(t, &a, &lay, &s, buf, sizeof(buf));
	PMC_CHECK_EQ(t, s.regs_user_abi, PERF_SAMPLE_REGS_ABI_64);
	/* The stack pointer within 64 KiB below this frame's locals. */
	PMC_CHECK(t, s.regs_user[0] <= here && here - s.regs_user[0] < 65536);
	PMC_CHECK_EQ(t, s.regs_user[1], s.ip);
	/* A bit past the architecture's registers: EINVAL. */
	a.sample_regs_user = REG_BAD;
	EXPECT_ERRNO(t, peo(&a, 0, -1, -1, 0), EINVAL);
#else
	pmc_test_skip(t, "register numbers known for x86_64 and aarch64 only");
#endif
}

/* PERF_SAMPLE_REGS_INTR (Linux 3.19): the registers at the interrupt, as
 * sample_regs_intr selects; for a user-space breakpoint with the kernel
 * excluded, the user's SP. */
CONF_TEST(sample, regs_intr)
{
#ifdef REG_SP
	struct pmc_sample_layout lay = { .sample_type = PERF_SAMPLE_REGS_INTR,
					 .sample_regs_intr = 1ull << REG_SP };
	struct perf_event_attr a;
	unsigned char buf[512];
	struct pmc_sample s;
	uint64_t here = (uintptr_t)&a;

	conf_require_kernel(t, 3, 19, "PERF_SAMPLE_REGS_INTR");
	sample_bp(t, &a, lay.sample_type);
	a.sample_regs_intr = lay.sample_regs_intr;
	one_sample(t, &a, &lay, &s, buf, sizeof(buf));
	PMC_CHECK_EQ(t, s.regs_intr_abi, PERF_SAMPLE_REGS_ABI_64);
	PMC_CHECK(t, s.regs_intr[0] <= here && here - s.regs_intr[0] < 65536);
#else
	pmc_test_skip(t, "register numbers known for x86_64 and aarch64 only");
#endif
}

/* PERF_SAMPLE_STACK_USER: "size" bytes of the user stack as asked by
 * sample_stack_user, and dyn_size, the part actually copied (at most the
 * size); a size that is not a multiple of 8 is refused (EINVAL). */
CONF_TEST(sample, stack_user)
{
	struct pmc_sample_layout lay = { .sample_type = PERF_SAMPLE_STACK_USER };
	struct perf_event_attr a;
	unsigned char buf[4096];
	struct pmc_sample s;

	sample_bp(t, &a, lay.sample_type);
	a.sample_stack_user = 1024;
	one_sample(t, &a, &lay, &s, buf, sizeof(buf));
	PMC_CHECK_EQ(t, s.stack_size, 1024);
	PMC_CHECK(t, s.stack_dyn_size > 0 && s.stack_dyn_size <= 1024);
	a.sample_stack_user = 1020;
	EXPECT_ERRNO(t, peo(&a, 0, -1, -1, 0), EINVAL);
}

/* PERF_SAMPLE_WEIGHT and PERF_SAMPLE_DATA_SRC are filled by PMUs that
 * measure them; a breakpoint sample carries the fields, weight 0 and the
 * data source "not available" in the operation, level, snoop, lock and TLB
 * parts (PERF_MEM_NA).  The level-number part (Linux 4.14) is NA too on
 * recent kernels and 0 on older ones (measured: 0 on 5.10): either holds. */
CONF_TEST(sample, weight_and_data_src_unmeasured)
{
	struct pmc_sample_layout lay = { .sample_type = PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC };
	const uint64_t na = PERF_MEM_S(OP, NA) | PERF_MEM_S(LVL, NA) | PERF_MEM_S(SNOOP, NA) |
			    PERF_MEM_S(LOCK, NA) | PERF_MEM_S(TLB, NA);
	const uint64_t lvlnum = PERF_MEM_S(LVLNUM, NA);
	struct perf_event_attr a;
	unsigned char buf[512];
	struct pmc_sample s;

	sample_bp(t, &a, lay.sample_type);
	one_sample(t, &a, &lay, &s, buf, sizeof(buf));
	PMC_CHECK_EQ(t, s.weight, 0);
	PMC_CHECK_EQ(t, s.data_src & ~lvlnum, na);
	PMC_CHECK(t, (s.data_src & lvlnum) == 0 || (s.data_src & lvlnum) == lvlnum);
	pmc_test_note(t, "data source %#" PRIx64 ": level number %s", s.data_src,
		      s.data_src & lvlnum ? "NA" : "0");
}

/* EOVERFLOW (Linux 4.8): "PERF_SAMPLE_CALLCHAIN is requested and
 * sample_max_stack is larger than the maximum specified in
 * /proc/sys/kernel/perf_event_max_stack"; at the maximum it opens. */
CONF_TEST(sample, max_stack_eoverflow)
{
	struct perf_event_attr a;
	unsigned max = 0;
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_stack", "r");

	conf_require_kernel(t, 4, 8, "sample_max_stack");
	if (!f || fscanf(f, "%u", &max) != 1 || max >= 65535)
		pmc_test_skip(t, "cannot read a bounded /proc/sys/kernel/perf_event_max_stack");
	fclose(f);
	sample_bp(t, &a, PERF_SAMPLE_CALLCHAIN);
	a.sample_max_stack = (uint16_t)(max + 1);
	EXPECT_ERRNO(t, peo(&a, 0, -1, -1, 0), EOVERFLOW);
	a.sample_max_stack = (uint16_t)max;
	close(OPEN(t, &a, 0, -1, -1, 0));
}

/* PERF_SAMPLE_BRANCH_STACK needs a PMU that records branches: a software
 * event refuses it (EOPNOTSUPP, "a feature not supported by the hardware"). */
CONF_TEST(sample, branch_stack_on_software_eopnotsupp)
{
	struct perf_event_attr a;

	sw_attr(&a, PERF_COUNT_SW_TASK_CLOCK);
	a.sample_period = 100000;
	a.sample_type = PERF_SAMPLE_BRANCH_STACK;
	a.branch_sample_type = PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_USER;
	EXPECT_ERRNO(t, peo(&a, 0, -1, -1, 0), EOPNOTSUPP);
}

/* aux_sample_size (Linux 5.5) samples an AUX area (PERF_SAMPLE_AUX) from
 * the group's AUX event: without one in the group the open is refused
 * (EINVAL, perf_get_aux_event). */
CONF_TEST(sample, aux_sample_size_without_aux_event)
{
	struct perf_event_attr a;

	conf_require_kernel(t, 5, 5, "aux_sample_size");
	sample_bp(t, &a, PERF_SAMPLE_IP | PERF_SAMPLE_AUX);
	a.aux_sample_size = 4096;
	EXPECT_ERRNO(t, peo(&a, 0, -1, -1, 0), EINVAL);
}

/* ---- the ring buffer --------------------------------------------------------------------- */

/* Mapping the same event twice with the same size shares one buffer (the
 * second map sees the first's records); a different size is refused
 * (EINVAL), as is a nonzero offset. */
CONF_TEST(ring, map_twice)
{
	long psize = sysconf(_SC_PAGESIZE);
	struct perf_event_attr a;
	struct perf_event_mmap_page *p1, *p2;
	int fd;

	sample_bp(t, &a, PERF_SAMPLE_IP);
	fd = OPEN(t, &a, 0, -1, -1, 0);
	p1 = mmap(NULL, 9 * (size_t)psize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	p2 = mmap(NULL, 9 * (size_t)psize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	PMC_CHECK(t, p1 != MAP_FAILED && p2 != MAP_FAILED && p1 != p2);
	if (p1 == MAP_FAILED || p2 == MAP_FAILED)
		return;
	ioc(t, fd, PERF_EVENT_IOC_ENABLE, 0);
	conf_fire(7);
	ioc(t, fd, PERF_EVENT_IOC_DISABLE, 0);
	PMC_CHECK(t, p1->data_head > 0);
	PMC_CHECK_EQ(t, p2->data_head, p1->data_head);
	PMC_CHECK(t, mmap(NULL, 5 * (size_t)psize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) ==
			     MAP_FAILED &&
		     errno == EINVAL);
	PMC_CHECK(t, mmap(NULL, 9 * (size_t)psize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, psize) ==
			     MAP_FAILED &&
		     errno == EINVAL);
	munmap(p1, 9 * (size_t)psize);
	munmap(p2, 9 * (size_t)psize);
	close(fd);
}

/* "The mmap size should be 1+2^n pages": the control page alone (n
 * absent: data_size 0) and 1+1, 1+2, 1+16 map; 1+3 and 1+5 do not (EINVAL). */
CONF_TEST(ring, sizes_one_plus_power_of_two)
{
	long psize = sysconf(_SC_PAGESIZE);
	static const struct { size_t pages; int ok; } sizes[] = {
		{ 1, 1 }, { 2, 1 }, { 3, 1 }, { 17, 1 }, { 4, 0 }, { 6, 0 },
	};
	struct perf_event_attr a;

	sample_bp(t, &a, PERF_SAMPLE_IP);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		int fd = OPEN(t, &a, 0, -1, -1, 0);
		size_t len = sizes[i].pages * (size_t)psize;
		struct perf_event_mmap_page *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

		if (sizes[i].ok) {
			if (p == MAP_FAILED)
				pmc_test_fail(t, "1 + %zu pages: %s", sizes[i].pages - 1, strerror(errno));
			PMC_CHECK_EQ(t, p->data_size, (sizes[i].pages - 1) * psize);
			munmap(p, len);
		} else if (p != MAP_FAILED || errno != EINVAL) {
			pmc_test_fail(t, "1 + %zu pages: %s, documented EINVAL", sizes[i].pages - 1,
				      p == MAP_FAILED ? strerror(errno) : "mapped");
		}
		close(fd);
	}
}

/* write_backward (Linux 4.7) on a read-only mapping: the kernel writes
 * records from the end of the buffer towards its start, data_head moving
 * down (as a u64, below 0), and overwrites the oldest when full.  Read from
 * data_head forward, the newest record comes first. */
CONF_TEST(ring, write_backward)
{
	long psize = sysconf(_SC_PAGESIZE);
	struct pmc_sample_layout lay = { .sample_type = PERF_SAMPLE_ADDR | PERF_SAMPLE_PERIOD };
	struct perf_event_attr a;
	struct perf_event_mmap_page *p;
	unsigned char *data;
	uint64_t head, size, off;
	int fd, n = 0;

	conf_require_kernel(t, 4, 7, "write_backward");
	sample_bp(t, &a, lay.sample_type);
	a.write_backward = 1;
	fd = OPEN(t, &a, 0, -1, -1, 0);
	p = mmap(NULL, 2 * (size_t)psize, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		pmc_test_fail(t, "read-only map: %s", strerror(errno));
	ioc(t, fd, PERF_EVENT_IOC_ENABLE, 0);
	conf_fire(10);
	ioc(t, fd, PERF_EVENT_IOC_DISABLE, 0);
	head = __atomic_load_n(&p->data_head, __ATOMIC_ACQUIRE);
	size = p->data_size;
	data = (unsigned char *)p + p->data_offset;
	PMC_CHECK(t, (int64_t)head < 0);
	/* Ten records of header + addr + period, from head upwards. */
	for (off = head; off != 0 && n < 20; n++) {
		struct perf_event_header h;

		memcpy(&h, data + (off % size), sizeof(h));
		if (h.size == 0)
			break;
		PMC_CHECK_EQ(t, h.type, PERF_RECORD_SAMPLE);
		PMC_CHECK_EQ(t, h.size, sizeof(h) + 16);
		off += h.size;
	}
	PMC_CHECK_EQ(t, n, 10);
	PMC_CHECK_EQ(t, -head, 10 * (sizeof(struct perf_event_header) + 16));
	/* Forward and backward writers cannot share a buffer (SET_OUTPUT). */
	{
		int fwd;

		sample_bp(t, &a, PERF_SAMPLE_IP);
		fwd = OPEN(t, &a, 0, -1, -1, 0);
		EXPECT_ERRNO(t, ioctl(fwd, PERF_EVENT_IOC_SET_OUTPUT, fd), EINVAL);
		close(fwd);
	}
	munmap(p, 2 * (size_t)psize);
	close(fd);
}
