# SPDX-License-Identifier: MIT
"""A throw-away PostgreSQL cluster for the history tests and benchmarks:
Debian's server (ci/setup installs it), initdb in a temporary directory, a
Unix socket there, no TCP.  Two roles: `pmcheck` (the owner, trusted on the
socket) and `secret`, whose password the server checks (scram-sha-256).

    with Cluster() as pg:           # raises Unavailable with the reason
        pg.uri("pmcheck")           # postgresql://pmcheck@/pmcheck?host=...
        pg.psql("SELECT 1")
"""
import glob
import os
import pwd
import shutil
import subprocess
import tempfile

PASSWORD = "s3cret-pw-9f2c"


class Unavailable(Exception):
    pass


def _bindir():
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0)
    if not found:
        raise Unavailable("no PostgreSQL server here (Debian's postgresql package; ci/setup installs it)")
    return os.path.dirname(found[-1])


class Cluster:
    def __init__(self, fsync=False):
        self.bin = _bindir()
        self.fsync = fsync
        self.dir = None

    def _as_server(self, argv, **kw):
        """initdb and pg_ctl refuse root: run them as the postgres user."""
        if os.geteuid() == 0:
            argv = ["runuser", "-u", "postgres", "--"] + argv
        return subprocess.run(argv, capture_output=True, text=True, timeout=120, **kw)

    def __enter__(self):
        self.dir = tempfile.mkdtemp(prefix="pmcheck-pg-")
        os.chmod(self.dir, 0o755)
        if os.geteuid() == 0:
            try:
                pw = pwd.getpwnam("postgres")
            except KeyError:
                raise Unavailable("no postgres user (Debian's postgresql package makes it)")
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
        data = os.path.join(self.dir, "data")
        p = self._as_server([os.path.join(self.bin, "initdb"), "-D", data, "-U", "pmcheck",
                             "--auth-local=trust", "-E", "UTF8", "--no-sync"])
        if p.returncode:
            raise Unavailable(f"initdb: {p.stderr.strip()[-400:]}")
        hba = os.path.join(data, "pg_hba.conf")
        with open(hba, "w") as f:
            f.write("local all secret scram-sha-256\nlocal all all trust\n")
        opts = f"-k {self.dir} -c listen_addresses= -c max_connections=50"
        if not self.fsync:
            opts += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        p = self._as_server([os.path.join(self.bin, "pg_ctl"), "-D", data, "-w", "-t", "60",
                             "-l", os.path.join(self.dir, "log"), "-o", opts, "start"])
        if p.returncode:
            log = ""
            if os.path.exists(os.path.join(self.dir, "log")):
                with open(os.path.join(self.dir, "log")) as f:
                    log = f.read()[-600:]
            self.__exit__(None, None, None)
            raise Unavailable(f"pg_ctl start: {p.stdout.strip()} {p.stderr.strip()} {log}")
        self.psql("CREATE DATABASE pmcheck", db="postgres")
        self.psql(f"CREATE ROLE secret LOGIN PASSWORD '{PASSWORD}'; "
                  "GRANT CREATE ON DATABASE pmcheck TO secret", db="postgres")
        return self

    def __exit__(self, *exc):
        if self.dir:
            data = os.path.join(self.dir, "data")
            if os.path.exists(os.path.join(data, "postmaster.pid")):
                self._as_server([os.path.join(self.bin, "pg_ctl"), "-D", data, "-m", "immediate", "stop"])
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    def uri(self, db="pmcheck", user="pmcheck", password=None):
        who = f"{user}:{password}" if password else user
        return f"postgresql://{who}@/{db}?host={self.dir}"

    def psql(self, sql, db="pmcheck"):
        """The rows of SQL, '|'-separated, one line each."""
        p = subprocess.run([os.path.join(self.bin, "psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                            "-h", self.dir, "-U", "pmcheck", "-d", db, "-c", sql],
                           capture_output=True, text=True, timeout=120)
        if p.returncode:
            raise RuntimeError(f"psql {sql!r}: {p.stderr.strip()}")
        return p.stdout.strip()
