/* SPDX-License-Identifier: MIT */
/*
 * One case in a child process: its own process group, its output and its
 * result through memory files (case_io.c), a deadline, a crash or a
 * timeout turned into an ERROR record.  Under the sim backend the child
 * re-executes the suite under valgrind for that one case (sim_case.c).
 * rerun.c decides what runs after a case's run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runner_int.h"
#include "sim/sim_harness.h"
#include "util/child.h"

#define OUTPUT_KEEP (64 * 1024) /* bytes of a case's output kept in results */

/* ---- running one case in a child ---------------------------------------------------- */

/* A process beside the case on CPU cpu that never sleeps: in the case's
 * process group (killed with its leftovers), and gone with the child. */
static void spinner_on(int cpu)
{
	pid_t parent = getpid();
	cpu_set_t one;

	if (fork() != 0)
		return;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(0);
	for (int fd = 0; fd < 1024; fd++)
		close(fd);
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	sched_setaffinity(0, sizeof(one), &one);
	for (volatile unsigned long spin = 0;; spin++)
		;
}

/*
 * In the case's child, before the case or valgrind starts: its threads on
 * the CPU it runs on, alone (PMC__SCHED_ONE_CPU) or beside a spinner that
 * the kernel time-slices them against (PMC__SCHED_CROWDED); or on every
 * CPU it may use, each with a spinner (PMC__SCHED_BUSY), as on a machine
 * running other jobs (`ctest -j2` beside a build).  Failures leave the
 * schedule as it is: calibration still runs.
 */
static void apply_schedule(void)
{
	cpu_set_t set;
	int cpu = sched_getcpu();

	if (pmc__schedule < PMC__SCHED_ONE_CPU || cpu < 0)
		return;
	if (pmc__schedule == PMC__SCHED_BUSY) {
		if (sched_getaffinity(0, sizeof(set), &set) != 0)
			return;
		/* Two a CPU: the case's threads get a third of each. */
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set)) {
				spinner_on(c);
				spinner_on(c);
			}
		return;
	}
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) != 0)
		return;
	if (pmc__schedule == PMC__SCHED_CROWDED)
		spinner_on(cpu);
}

static pid_t current_child;

/* SIGINT/SIGTERM to the runner: the running case and its children die
 * with it. */
static void forward_signal(int sig)
{
	if (current_child > 0)
		kill(-current_child, SIGKILL);
	signal(sig, SIG_DFL);
	raise(sig);
}

void pmc__runner_forward_signals(void)
{
	signal(SIGINT, forward_signal);
	signal(SIGTERM, forward_signal);
}

/* Wait for the case up to `timeout` seconds: 1 exited (c->status set), 2
 * reported its result on the pipe and is still taking its counters down,
 * 0 timed out. */
/*
 * A case past its timeout.  Under the sim backend, SIGTERM to its process
 * group first: the case's process then removes valgrind's dump directory
 * (/tmp/pmcheck-sim.*) once valgrind is gone, and a second SIGTERM has it
 * kill a valgrind whose program ignores the first.  Then SIGKILL to
 * whatever is left of the group (on perf, at once: a case's process holds
 * nothing outside itself).
 */
static void terminate_case(struct pmc__child *c, bool sim)
{
	for (int round = 0; sim && round < 2 && c->pid > 0; round++) {
		kill(-c->pid, SIGTERM);
		if (pmc__child_wait(c, pmc__child_now() + 1.0) == PMC__CHILD_EXITED)
			break;
	}
	pmc__child_kill(c);
}

static int wait_case(struct pmc__child *c, double timeout)
{
	double deadline = pmc__child_now() + timeout;

	for (;;) {
		char byte;
		int w = pmc__child_wait(c, deadline);

		if (w == PMC__CHILD_EXITED)
			return 1;
		if (w == 0)
			return 0;
		if (read(c->fd, &byte, 1) == 1)
			return 2;
		pmc__child_close(c); /* closed unwritten: wait for the exit */
	}
}

/* Cases that reported their result and were left taking their counters
 * down: reaped without waiting before the next fork, and at the end. */
static struct pmc__child pending[64];
static size_t npending;

static void reap_pending(bool block)
{
	for (size_t i = 0; i < npending;) {
		if (!pmc__child_reap(&pending[i], block)) {
			i++;
			continue;
		}
		pending[i] = pending[--npending];
	}
}

static void add_pending(const struct pmc__child *c)
{
	if (npending == sizeof(pending) / sizeof(pending[0]))
		reap_pending(true);
	pending[npending++] = *c;
}

/*
 * Did valgrind or VEX stop the case on an internal error ("valgrind: the
 * 'impossible' happened:", VEX's "the `impossible' happened:")?  Then
 * reason says so, with the line that follows (what failed).
 */
static bool valgrind_panic(const char *out, char *reason, size_t size)
{
	const char *core = strstr(out, "the 'impossible' happened:");
	const char *vex = strstr(out, "the `impossible' happened:");
	const char *hit = core && (!vex || core < vex) ? core : vex; /* the first: the cause */
	size_t n;

	if (!hit)
		return false;
	hit = strchr(hit, '\n');
	hit = hit ? hit + strspn(hit, "\n \t") : "";
	n = strcspn(hit, "\n");
	snprintf(reason, size,
		 "valgrind stopped on an internal error (\"%.*s\"), not the case: see output; PMCHECK_SIM_ENGINE=callgrind runs the case under callgrind instead",
		 (int)(n > 200 ? 200 : n), hit);
	return true;
}

/*
 * A case killed by SIGILL under the simulator, where valgrind's decoder
 * said why (exec.c asks for --sigill-diagnostics): an instruction this
 * valgrind cannot run, which the CPU may well run.  The reason quotes the
 * decoder, names the function and says what to do.
 */
static bool sim_sigill(const char *out, char *reason, size_t size)
{
	const char *bytes = strstr(out, "unhandled instruction bytes: ");
	const char *at = strstr(out, "Unrecognised instruction at address");
	const char *fn = NULL;
	size_t nb, nf = 0;

	if (!bytes)
		return false;
	bytes += strlen("unhandled instruction bytes: ");
	nb = strcspn(bytes, "\n");
	/* The line after it: "==PID==    at 0xADDR: FUNCTION (in OBJECT)". */
	if (at && (at = strchr(at, '\n'))) {
		size_t line = strcspn(at + 1, "\n");
		const char *colon = memmem(at + 1, line, ": ", 2);

		if (colon) {
			fn = colon + 2;
			nf = (size_t)(at + 1 + line - fn);
			for (size_t k = 0; k + 4 <= nf; k++)
				if (!memcmp(fn + k, " (in", 4)) {
					nf = k;
					break;
				}
		}
	}
	snprintf(reason, size,
		 "the simulator cannot run an instruction%s%.*s: %s's decoder stopped at bytes %.*s (\"the instruction is legitimate but Valgrind doesn't handle it\", or the code jumped astray); build that code for sim without the extension (-mno-avx512f and the like, or a CPU dispatch the sim run avoids), or count it with --backend=perf",
		 fn ? " in " : "", (int)(nf > 120 ? 120 : nf), fn ? fn : "", pmc_sim_valgrind_version(),
		 (int)(nb > 60 ? 60 : nb), bytes);
	return true;
}

void pmc__run_forked(struct runner *r, const struct pmc_test_def *d,
		       const struct pmc_test_options *o, double *seconds, struct pmc__result *res)
{
	int outfd = pmc__case_memfd("pmcheck-output"), resfd = pmc__case_memfd("pmcheck-result");
	int done = -1;
	struct pmc__child c;
	double t0 = pmc__child_now();
	char reason[1024], *out = NULL;
	size_t out_total = 0;
	int status = 0, wait_rc;
	bool exited_early = false;
	pid_t pid;

	memset(res, 0, sizeof(*res));
	if (outfd < 0 || resfd < 0) {
		snprintf(reason, sizeof(reason), "cannot create the result buffer: %s", strerror(errno));
		pmc__case_error_result(d, reason, res);
		goto out;
	}
	/* The case writes a byte down the pipe once its result is written,
	 * before it takes its counters down (exec, under the sim backend,
	 * closes it).  Its own process group: a timeout kills the case and
	 * its children (valgrind too, under the sim backend). */
	reap_pending(false);
	pid = pmc__child_fork(&c, PMC__CHILD_GROUP | PMC__CHILD_PIPE, &done);
	/* No descriptor to spare for the pipe: the case still runs (and
	 * reports the shortage itself), and the runner waits for its exit. */
	if (pid == -EMFILE || pid == -ENFILE)
		pid = pmc__child_fork(&c, PMC__CHILD_GROUP, NULL);
	if (pid < 0) {
		snprintf(reason, sizeof(reason), "fork: %s", strerror((int)-pid));
		pmc__case_error_result(d, reason, res);
		goto out;
	}
	if (pid == 0) {
		struct pmc__result cr;
		int rc;

		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		dup2(outfd, STDOUT_FILENO);
		dup2(outfd, STDERR_FILENO);
		setvbuf(stdout, NULL, _IOLBF, 0);
		apply_schedule();
		if (r->backend == PMC_BACKEND_SIM && !pmc_sim_active()) {
			rc = pmc__exec_sim_case(r, d, resfd);
			fflush(NULL);
			_exit(rc);
		}
		pmc__defer_close();
		rc = pmc__run_case(d, o, r->backend, r->strict, &cr) || pmc__case_write_result(resfd, &cr) ? 1 : 0;
		pmc__result_release(&cr);
		fflush(NULL);
		/* Reported: the runner goes on while the kernel unregisters
		 * this case's uprobes (it waits for grace periods). */
		if (rc == 0 && done >= 0 && write(done, "", 1) == 1)
			close(done);
		pmc__close_deferred();
		exit(rc);
	}
	current_child = pid;
	wait_rc = wait_case(&c, o->timeout);
	pmc__child_close(&c);
	if (wait_rc == 0) {
		terminate_case(&c, r->backend == PMC_BACKEND_SIM);
		current_child = 0;
		if (r->backend == PMC_BACKEND_SIM && !(r->timeout > 0))
			snprintf(reason, sizeof(reason),
				 "timed out after %g s (under sim, %d times the case's %g s; set .timeout or --timeout=S)",
				 o->timeout, PMC__SIM_TIMEOUT_FACTOR, o->timeout / PMC__SIM_TIMEOUT_FACTOR);
		else
			snprintf(reason, sizeof(reason), "timed out after %g s (set .timeout or --timeout)", o->timeout);
		pmc__case_error_result(d, reason, res);
		res->timeout = true;
		goto out;
	}
	kill(-pid, SIGKILL); /* leftovers of the case */
	current_child = 0;
	status = c.status;
	if (wait_rc == 2)
		add_pending(&c); /* reaped later: its exit waits for the kernel */
	{
		size_t len;
		char *text = pmc__case_slurp(resfd, SIZE_MAX / 2, &len);

		if (text && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
			json_error_t jerr;
			json_t *o2 = json_loads(text, 0, &jerr);
			char why[768];

			if (!o2) {
				snprintf(reason, sizeof(reason), "unreadable result from the case: %s", jerr.text);
				pmc__case_error_result(d, reason, res);
			} else if (pmc__result_from_json(o2, res, "the case's result", why, sizeof(why))) {
				snprintf(reason, sizeof(reason), "unreadable result: %s", why);
				pmc__case_error_result(d, reason, res);
			}
			json_decref(o2);
		} else if (WIFSIGNALED(status)) {
			snprintf(reason, sizeof(reason), "crashed: killed by signal %d (%s)", WTERMSIG(status),
				 strsignal(WTERMSIG(status)));
			pmc__case_error_result(d, reason, res);
		} else {
			snprintf(reason, sizeof(reason),
				 "the case exited with status %d before reporting a result (exit() in the test, or a sanitizer report; see output)",
				 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
			pmc__case_error_result(d, reason, res);
			exited_early = true;
		}
		free(text);
	}
out:
	*seconds = pmc__child_now() - t0;
	if (outfd >= 0)
		out = pmc__case_slurp(outfd, OUTPUT_KEEP, &out_total);
	/* valgrind (or VEX) stopped on an internal error: say so, not exit();
	 * or on an instruction it cannot decode: say which, not "signal 4". */
	if (r->backend == PMC_BACKEND_SIM && out &&
	    ((exited_early && valgrind_panic(out, reason, sizeof(reason))) ||
	     (WIFSIGNALED(status) && WTERMSIG(status) == SIGILL && sim_sigill(out, reason, sizeof(reason))))) {
		struct pmc__result panicked;

		pmc__case_error_result(d, reason, &panicked);
		free(res->reason);
		res->reason = panicked.reason;
		panicked.reason = NULL;
		pmc__result_release(&panicked);
	}
	/* A crash in a region: the case's handler (case.c) named it. */
	if (WIFSIGNALED(status) && out && res->reason) {
		const char *mark = strstr(out, "pmcheck: crashed in region \"");
		char *where = NULL;

		if (mark) {
			mark += strlen("pmcheck: crashed in region \"");
			if (asprintf(&where, "%s, in region \"%.*s\"", res->reason,
				     (int)strcspn(mark, "\"\n"), mark) > 0) {
				free(res->reason);
				res->reason = where;
			}
		}
	}
	if (out && *out) {
		res->output = out;
		out = NULL;
		if (out_total > OUTPUT_KEEP)
			res->output_truncated = out_total - OUTPUT_KEEP;
	}
	free(out);
	if (outfd >= 0)
		close(outfd);
	if (resfd >= 0)
		close(resfd);
}

