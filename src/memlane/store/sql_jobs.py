"""The job table of a SQL store (core/jobs.py), written once for SQLite and PostgreSQL.

- A job is queued in the transaction that keeps its messages and provisional memories
  (``ChangeSet.jobs``), so a queued call is never half kept.
- A worker *claims* the oldest job whose order key (its user, else agent, else run) has no
  older open job, and holds it under a lease it renews while it works. On PostgreSQL the
  claim reads the queue with ``FOR UPDATE SKIP LOCKED``: workers of any number of processes
  and hosts take different jobs without waiting on each other. On SQLite the claim runs in
  the file's write transaction (one writer at a time), which serialises claims as well.
- A job whose lease ran out (its worker died, or hangs) is claimed again by any worker.
- A job ends in the transaction that writes its effect (``ChangeSet.job_done``), and only if
  the worker still holds that attempt of it: a worker that lost its job (a lease that ran out
  while it formed; another worker took over) has its whole transaction rolled back
  (``JobLostError``), so a job's effect is applied once.

Times of leases are seconds since the epoch by the database's clock, so hosts whose clocks
disagree still agree on when a lease ran out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memlane.core import timeutil
from memlane.core.jobs import Job, JobDone, JobLostError
from memlane.store.sql_dialect import Con, SqlDialect

JOB_COLUMNS = ("id, kind, order_key, status, request, result, error, attempts, worker, created_at, started_at,"
               " finished_at")
_OPEN = "('PENDING', 'RUNNING')"


class SqlJobs(SqlDialect):
    #: appended to the claim's read of the queue (PostgreSQL: ``FOR UPDATE OF j SKIP LOCKED``)
    CLAIM_LOCK = ""

    # -- written with other changes (SqlMemoryStore.apply) -------------------------------------------

    def _enqueue(self, con: Con, jobs: Sequence[Job]) -> None:
        con.cursor().executemany(
            self._sql("INSERT INTO {jobs} ({tenant_col}" + JOB_COLUMNS + ")"
                      " VALUES ({tenant_val}%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)"),
            [self._t(j.id, j.kind, j.order_key, j.status, self._json_in(j.request), None, None, 0, None, j.created_at,
                     None, None) for j in jobs])

    def _finish_job(self, con: Con, done: JobDone) -> None:
        """End a held job (``JobDone``); ``JobLostError`` when ``done.worker`` no longer holds that attempt."""
        changed = con.execute(
            self._sql("UPDATE {jobs} SET status = %s, result = %s, error = %s, finished_at = %s, lease_until = NULL"
                      " WHERE {tenant}id = %s AND status = 'RUNNING' AND worker = %s AND attempts = %s"),
            (done.status, None if done.result is None else self._json_in(done.result), done.error, timeutil.now_iso(),
             *self._t(done.id, done.worker, done.attempt))).rowcount
        if changed != 1:
            raise JobLostError(f"job {done.id} is no longer held by {done.worker} (attempt {done.attempt}): its lease "
                               "ran out and another worker took it over")
        if done.provisional:
            con.execute(self._sql("DELETE FROM {memories} WHERE {tenant}event_id = %s"), self._t(done.id))

    # -- reads ---------------------------------------------------------------------------------------

    def _job(self, row: Sequence[Any], tenant: str | None = None) -> Job:
        return Job(id=row[0], kind=row[1], order_key=row[2], status=row[3], request=self._json_out(row[4]),
                   result=None if row[5] is None else self._json_out(row[5]), error=row[6], attempts=row[7],
                   worker=row[8], created_at=row[9], started_at=row[10], finished_at=row[11], tenant=tenant)

    def job(self, job_id: str) -> Job | None:
        row = self._run(lambda con: con.execute(
            self._sql("SELECT " + JOB_COLUMNS + " FROM {jobs} WHERE {tenant}id = %s"), self._t(job_id)).fetchone())
        return self._job(row, self.tenant) if row else None

    def jobs(self, status: str | None = None, limit: int = 100, *, kind: str | None = None,
             order_key: str | None = None) -> list[Job]:
        """The newest ``limit`` jobs (of one state, one kind, one order key), newest first."""
        given = [(column, value) for column, value in (("status", status), ("kind", kind), ("order_key", order_key))
                 if value]
        condition = " AND ".join(f"{column} = %s" for column, _ in given) or "TRUE"
        params = self._t(*(value for _, value in given), limit)
        rows = self._run(lambda con: con.execute(
            self._sql("SELECT " + JOB_COLUMNS + " FROM {jobs} WHERE {tenant}" + condition + " ORDER BY seq DESC"
                      " LIMIT %s"), params).fetchall())
        return [self._job(row, self.tenant) for row in rows]

    def open_jobs(self) -> int:
        """How many jobs wait or run."""
        return self._run(lambda con: con.execute(
            self._sql("SELECT count(*) FROM {jobs} WHERE {tenant}status IN " + _OPEN), self._t()).fetchone()[0])

    # -- the workers' side ---------------------------------------------------------------------------

    def claim_job(self, worker: str, lease: float, *, any_tenant: bool = False,
                  kinds: Sequence[str] = ()) -> Job | None:
        """Hold the next job that may run (RUNNING, one more attempt, leased for ``lease`` seconds),
        or None. ``any_tenant`` (PostgreSQL): the next job of every tenant of the database, not only
        the store's own (a server's workers serve all of them). ``kinds``: only jobs of these kinds
        (the workers' quick lane), else any."""
        mine = "" if any_tenant or not self.TENANTED else "j.tenant = %s AND "
        params: tuple[Any, ...] = () if any_tenant or not self.TENANTED else (self.tenant,)
        if kinds:
            mine += "j.kind IN (" + ", ".join(["%s"] * len(kinds)) + ") AND "
            params += tuple(kinds)
        same = "e.tenant = j.tenant AND " if self.TENANTED else ""
        moved = (" AND NOT EXISTS (SELECT 1 FROM {meta} x WHERE x.tenant = j.tenant AND x.key = 'moved_to')"
                 if self.TENANTED else "")
        ready = ("j.status IN " + _OPEN + " AND (j.status = 'PENDING' AND coalesce(j.not_before, 0) <= {epoch}"
                 " OR j.status = 'RUNNING' AND j.lease_until < {epoch})")
        select = self._sql(
            "SELECT " + ("j.tenant, " if self.TENANTED else "") + "j.id FROM {jobs} j WHERE " + mine + ready
            + " AND NOT EXISTS (SELECT 1 FROM {jobs} e WHERE " + same + "e.order_key = j.order_key AND e.seq < j.seq"
            " AND e.status IN " + _OPEN + ")" + moved + " ORDER BY j.seq LIMIT 1" + self.CLAIM_LOCK)
        # an idle queue is looked at without a write transaction (on SQLite that would take the file's
        # write lock, and end the cached keyword statistics, at every poll)
        if not self._run(lambda con: con.execute(self._sql("SELECT 1 FROM {jobs} j WHERE " + mine + ready + " LIMIT 1"),
                                                 params).fetchone()):
            return None

        def claim(con: Con) -> Job | None:
            row = con.execute(select, params).fetchone()
            if row is None:
                return None
            tenant, job_id = (row[0], row[1]) if self.TENANTED else (self.tenant, row[0])
            con.execute(self._sql("UPDATE {jobs} SET status = 'RUNNING', worker = %s, attempts = attempts + 1,"
                                  " lease_until = {epoch} + %s, started_at = %s WHERE {tenant}id = %s"),
                        (worker, float(lease), timeutil.now_iso(), *self._of(tenant, job_id)))
            held = con.execute(self._sql("SELECT " + JOB_COLUMNS + " FROM {jobs} WHERE {tenant}id = %s"),
                               self._of(tenant, job_id)).fetchone()
            return self._job(held, tenant)

        return self._run(claim, write=True)

    def renew_jobs(self, worker: str, held: Sequence[Job], lease: float) -> set[str]:
        """Push back the leases of jobs ``worker`` holds; returns the ids it still holds."""
        def renew(con: Con) -> set[str]:
            kept = set()
            for job in held:
                if con.execute(self._sql("UPDATE {jobs} SET lease_until = {epoch} + %s WHERE {tenant}id = %s"
                                         " AND status = 'RUNNING' AND worker = %s AND attempts = %s"),
                               (float(lease), *self._of(job.tenant, job.id, worker, job.attempts))).rowcount:
                    kept.add(job.id)
            return kept

        return self._run(renew, write=True) if held else set()

    def release_job(self, job: Job, worker: str, error: str, retry_in: float) -> bool:
        """Give a held job back to the queue after a failure that may pass (it runs again in
        ``retry_in`` seconds, first of its order key); False when ``worker`` no longer held it."""
        return bool(self._run(lambda con: con.execute(
            self._sql("UPDATE {jobs} SET status = 'PENDING', worker = NULL, lease_until = NULL,"
                      " not_before = {epoch} + %s, error = %s WHERE {tenant}id = %s AND status = 'RUNNING'"
                      " AND worker = %s AND attempts = %s"),
            (float(retry_in), error, *self._of(job.tenant, job.id, worker, job.attempts))).rowcount, write=True))

    def prune_jobs(self, finished_before: str, *, any_tenant: bool = False) -> int:
        """Erase the jobs that ended before ``finished_before`` (their events are forgotten)."""
        mine = "" if any_tenant or not self.TENANTED else "tenant = %s AND "
        params = (finished_before,) if any_tenant or not self.TENANTED else (self.tenant, finished_before)

        def prune(con: Con) -> int:
            if not self._housekeeping_turn(con):
                return 0
            return con.execute(self._sql("DELETE FROM {jobs} WHERE " + mine + "finished_at IS NOT NULL"
                                         " AND finished_at < %s"), params).rowcount

        return self._run(prune, write=True)

    def _housekeeping_turn(self, con: Con) -> bool:
        """Whether this transaction does the queue's housekeeping (one process of a deployment at a
        time; SQLite's write lock makes every writer take turns already)."""
        return True

    def _of(self, tenant: str | None, *params: Any) -> tuple[Any, ...]:
        """Parameters of a statement about a job of ``tenant`` (a cross-tenant queue's job)."""
        return (tenant or self.tenant, *params) if self.TENANTED else params

