/*
 * fuse.pml: the Spin twin of wbspec's FUSE model (models/src/fuse/) for
 * the truncate-vs-writeback family under FUSE_NOWRITE (kernel state T and
 * T2 with one-page folios): the flusher (`wb none`, `wb all`) racing
 * ftruncate (`truncate S`) and buffered writes (`write A+N`, with
 * writeback_cache), with 1..3 daemon threads, 1..4 pages, max_pages, and
 * the switches that change this family's programs or steps
 * (p_no_writectr, mut_crop_old_size, mut_flush_ignores_nowrite,
 * mut_invalidate_under_nowrite, mut_wb_ignores_writeback).
 *
 * Written from docs/model.md and the model's code (program.rs: the task
 * programs; model.rs: program control; writeback.rs, truncate.rs,
 * daemon.rs, request.rs, ghost.rs: the steps; properties.rs). It is an
 * independent transcription for cross-validation: `spin/compare.sh`
 * runs it beside `wbspec check` and the counts must agree
 * (checks/tests/spin.rs). docs/performance.md, "Spin twin", explains
 * the encoding; the deliberate choices that make Spin's "states, stored"
 * equal wbspec's unique-state count are:
 *
 *  1. One Spin transition = one wbspec step. Every step is one d_step
 *     whose first statement is the step's enabling condition; every
 *     process is a `do` loop of such d_steps, so a process's control
 *     location never changes (it is always the loop head) and the state
 *     Spin stores is exactly the global data below. Compile with
 *     -DNOREDUCE: partial-order reduction would skip states wbspec
 *     stores (wbspec uses no reduction).
 *  2. The globals mirror wbspec's `State` field by field, including the
 *     ghost fields the properties need (hist, fin, sup, drops,
 *     wrote_once, viol, ev and the tasks' `before` windows) and the
 *     fields wbspec keeps although nothing reads them again (a task's
 *     last batch start `bfirst`, `saved`, a worker's payload): two
 *     wbspec states that differ only there are two states, so they must
 *     be two here. Fields constant in this family (L's temp pages, the
 *     io-mode counters, error and attribute state, reclaim) are left out:
 *     a constant adds no state. Queues are arrays with a length, shifted
 *     on removal and cleared behind, as `Bounded` is; an idle worker's
 *     request fields are cleared (wbspec's `Worker::Idle` has none).
 *  3. Scratch variables of the steps are `hidden` (not in the state
 *     vector); the task programs are a `hidden` constant table.
 *  4. Only the lowest-numbered idle worker reads /dev/fuse (as in
 *     wbspec's `reader`): the read step of worker w is enabled only if
 *     every worker below w is busy.
 *  5. Every process's loop head is an end state, so Spin's own
 *     invalid-end-state check is silent; deadlock (property e) is an
 *     assertion of the watchdog process, whose only step is enabled by
 *     `timeout` (no other step enabled) and returns to the same state:
 *     it adds no state. The always-properties a1, a2, a3, c1 and g-bugon
 *     are assertions at the end of every step, i.e. on every reachable
 *     state but the initial one (where none of them can fail: nothing is
 *     in flight, and a3 needs a quiescent state whose server file equals
 *     the page cache, which holds by construction).
 *  6. Run pan with -c0 (do not stop at the first violation), so the
 *     search is exhaustive even when a mutant violates a property and the
 *     count stays comparable (wbspec's tally never stops either).
 *  7. Generate pan with `spin -o2`: by default Spin hides variables that
 *     are written but never read (size_unstable, drops and ev here: only
 *     wbspec's other properties and witnesses read them), which merges
 *     states wbspec keeps apart.
 *
 * Configuration (cpp, `spin -D...`; `spin-twin flags NAME` prints a
 * catalogue check's, checks/src/bin/spin-twin/flags.rs):
 *   NP pages, INIT_SIZE, CACHED and DIRTY (page bit masks), NW daemon
 *   threads, MAX_PAGES, NT tasks TASK0..TASK5 as KIND,A,B with KIND one
 *   of WB (A = 1 for `wb all`), TRUNC (A = size) or WRITE (`write A+B`,
 *   writeback_cache); switch flags as 0/1.
 */

/* ---------------------------------------------------------------- config */
#ifndef NP
#define NP 2
#endif
#ifndef INIT_SIZE
#define INIT_SIZE NP
#endif
#ifndef CACHED
#define CACHED 0
#endif
#ifndef DIRTY
#define DIRTY 0
#endif
#ifndef NW
#define NW 1
#endif
#ifndef MAX_PAGES
#define MAX_PAGES NP
#endif
#ifndef NT
#define NT 2
#define TASK0 WB,0,0
#define TASK1 TRUNC,1,0
#endif
#ifndef P_NO_WRITECTR
#define P_NO_WRITECTR 0
#endif
#ifndef MUT_CROP_OLD_SIZE
#define MUT_CROP_OLD_SIZE 0
#endif
#ifndef MUT_FLUSH_IGNORES_NOWRITE
#define MUT_FLUSH_IGNORES_NOWRITE 0
#endif
#ifndef MUT_INVALIDATE_UNDER_NOWRITE
#define MUT_INVALIDATE_UNDER_NOWRITE 0
#endif
#ifndef MUT_WB_IGNORES_WRITEBACK
#define MUT_WB_IGNORES_WRITEBACK 0
#endif
/* iomap writeback (6.17+): a dirty folio wholly beyond i_size is skipped */
#ifndef IOMAP_WB_EOF
#define IOMAP_WB_EOF 0
#endif
/* capacity of /dev/fuse and fi->queued_writes (an overflow is an
 * assertion failure, never a silent drop) */
#ifndef MAXQ
#define MAXQ 6
#endif

#define NONE 255
/* FUSE_NOWRITE: wbspec's bias (state.rs) */
#define FUSE_NOWRITE (-64)

/* folio flags (common/page.rs) */
#define PG_PRESENT 1
#define PG_UPTODATE 2
#define PG_DIRTY 4
#define PG_WRITEBACK 8
#define PG_LOCKED 16
#define PG_TOWRITE 32
#define PG_RECLAIM 64

/* data versions (state.rs) */
#define V_PREDIRTY 15

/* sticky violation bits (state.rs) */
#define VIOL_A2 1
#define VIOL_BUG 16

/* Event (state.rs): what the last step did; reset by every step */
#define EV_NONE 0
#define EV_DROP 2
#define EV_CROP 3
#define EV_SECOND 7
#define EV_WB_EOF_SKIP 24

/* request kinds on /dev/fuse: (kind, a, b, c) */
#define K_CW 1      /* CacheWrite { first = a, n = b, sent = c } */
#define K_SETATTR 2 /* Setattr { task = a, size = b } */

/* workers */
#define W_IDLE 0
#define W_BUSY 1
#define W_ENDING 2

/* ------------------------------------------------- the initial page cache */
/* per page p: C<p>, D<p> (cached, dirty), I<p> (p < INIT_SIZE) as 0/1 */
#define BIT_OF(m, p) (((m) >> (p)) & 1)
#if BIT_OF(CACHED, 0)
#define C0 1
#else
#define C0 0
#endif
#if BIT_OF(CACHED, 1)
#define C1 1
#else
#define C1 0
#endif
#if BIT_OF(CACHED, 2)
#define C2 1
#else
#define C2 0
#endif
#if BIT_OF(CACHED, 3)
#define C3 1
#else
#define C3 0
#endif
#if BIT_OF(DIRTY, 0)
#define D0 1
#else
#define D0 0
#endif
#if BIT_OF(DIRTY, 1)
#define D1 1
#else
#define D1 0
#endif
#if BIT_OF(DIRTY, 2)
#define D2 1
#else
#define D2 0
#endif
#if BIT_OF(DIRTY, 3)
#define D3 1
#else
#define D3 0
#endif
#if 0 < INIT_SIZE
#define I0 1
#else
#define I0 0
#endif
#if 1 < INIT_SIZE
#define I1 1
#else
#define I1 0
#endif
#if 2 < INIT_SIZE
#define I2 1
#else
#define I2 0
#endif
#if 3 < INIT_SIZE
#define I3 1
#else
#define I3 0
#endif

/* SEL(c, a, b): a if the literal c is 1, else b (array initialisers
 * must be literals, so the choice is made by the preprocessor) */
#define SEL(c, a, b) SEL_(c, a, b)
#define SEL_(c, a, b) SEL_##c(a, b)
#define SEL_0(a, b) b
#define SEL_1(a, b) a
#define SEL2(c, d, a, b, e, f) SEL(c, SEL(d, a, b), SEL(d, e, f))

/* initial folio flags, data, server data, history, fin and sup of page p
 * (FuseModel::initial: a dirty page holds version 15, pushed on the
 * history; sup = the versions before it) */
#define INIT_FLAGS(p) SEL2(C##p, D##p, 7, 3, 4, 0)
#define INIT_VER(p) SEL(D##p, 15, SEL(C##p, SEL(I##p, 1, 0), 0))
#define INIT_SRV(p) SEL(I##p, 1, 0)
#define INIT_HIST(p) SEL2(D##p, I##p, 241, 240, 1, 0)
#define INIT_FIN(p) SEL2(D##p, I##p, 32770, 32769, 2, 1)
#define INIT_SUP(p) SEL2(D##p, I##p, 2, 1, 0, 0)

#if NP == 1
#define PAGES(X) X(0)
#elif NP == 2
#define PAGES(X) X(0), X(1)
#elif NP == 3
#define PAGES(X) X(0), X(1), X(2)
#elif NP == 4
#define PAGES(X) X(0), X(1), X(2), X(3)
#else
#error "NP is 1..4"
#endif

/* i_size at the start: init_size, extended over dirty pages */
#if D3 && INIT_SIZE < 4
#define ISIZE0 4
#elif D2 && INIT_SIZE < 3
#define ISIZE0 3
#elif D1 && INIT_SIZE < 2
#define ISIZE0 2
#elif D0 && INIT_SIZE < 1
#define ISIZE0 1
#else
#define ISIZE0 INIT_SIZE
#endif

/* ------------------------------------------------------- task programs */
/* ops (program.rs `Op`), each (code, a, b, c) */
#define O_END 0
#define O_INODELOCK 1
#define O_SETNOWRITE 2
#define O_WAITNOWRITE 3
#define O_SEND_SETATTR 4
#define O_RECV_SETATTR 5   /* a = release */
#define O_TPC 6            /* TruncatePagecache */
#define O_INVALIDATE 7     /* a = first, b = n, c = if_resized */
#define O_SETATTR_RET 8
#define O_RELEASE_NOWRITE 9
#define O_WRITEPAGES 10    /* a = first, b = n, c = all */
#define O_COPYPAGES 11     /* a = first, b = n */
#define O_UNLOCK_RETURN 12 /* a = unlock */

#define MAXOPS 10
#define Z O_END, 0, 0, 0
#define PAD1 Z
#define PAD2 Z, Z
#define PAD3 Z, Z, Z
#define PAD4 Z, Z, Z, Z
#define PAD7 PAD4, Z, Z, Z
#define PAD9 PAD4, PAD4, Z

/* task kinds */
#define K_WB 1
#define K_TRUNC 2
#define K_WRITE 3

/* `wb none` / `wb all`: fuse_writepages over the file */
#define PROG_WB(all, b) O_WRITEPAGES, 0, NP, all, PAD9
/* `write A+N` (writeback_cache): generic_file_write_iter */
#define PROG_WRITE(first, n) O_INODELOCK, 0, 0, 0, O_COPYPAGES, first, n, 0, \
    O_UNLOCK_RETURN, 1, 0, 0, PAD7
/* `truncate S`: do_setattr_size (program.rs) */
#if P_NO_WRITECTR
#define PROG_TRUNC(size, b) O_INODELOCK, 0, 0, 0, O_SEND_SETATTR, 0, 0, 0, \
    O_RECV_SETATTR, 0, 0, 0, O_TPC, 0, 0, 0, O_INVALIDATE, 0, NP, 1, \
    O_SETATTR_RET, 0, 0, 0, PAD4
#elif MUT_INVALIDATE_UNDER_NOWRITE
#define PROG_TRUNC(size, b) O_INODELOCK, 0, 0, 0, O_SETNOWRITE, 0, 0, 0, \
    O_WAITNOWRITE, 0, 0, 0, O_SEND_SETATTR, 0, 0, 0, \
    O_RECV_SETATTR, 0, 0, 0, O_TPC, 0, 0, 0, O_INVALIDATE, 0, NP, 1, \
    O_RELEASE_NOWRITE, 0, 0, 0, O_SETATTR_RET, 0, 0, 0, PAD1
#else
#define PROG_TRUNC(size, b) O_INODELOCK, 0, 0, 0, O_SETNOWRITE, 0, 0, 0, \
    O_WAITNOWRITE, 0, 0, 0, O_SEND_SETATTR, 0, 0, 0, \
    O_RECV_SETATTR, 1, 0, 0, O_TPC, 0, 0, 0, O_INVALIDATE, 0, NP, 1, \
    O_SETATTR_RET, 0, 0, 0, PAD2
#endif

#define PROG(k, a, b) PROG_##k(a, b)
#define PROGX(x) PROG(x)
#define KIND(k, a, b) K_##k
#define KINDX(x) KIND(x)
#define ARG(k, a, b) a
#define ARGX(x) ARG(x)
#define ARG2(k, a, b) b
#define ARG2X(x) ARG2(x)

#if NT == 1
#define TASKS(X) X(TASK0)
#elif NT == 2
#define TASKS(X) X(TASK0), X(TASK1)
#elif NT == 3
#define TASKS(X) X(TASK0), X(TASK1), X(TASK2)
#elif NT == 4
#define TASKS(X) X(TASK0), X(TASK1), X(TASK2), X(TASK3)
#elif NT == 5
#define TASKS(X) X(TASK0), X(TASK1), X(TASK2), X(TASK3), X(TASK4)
#elif NT == 6
#define TASKS(X) X(TASK0), X(TASK1), X(TASK2), X(TASK3), X(TASK4), X(TASK5)
#else
#error "NT is 1..6"
#endif

hidden byte prog[NT * MAXOPS * 4] = { TASKS(PROGX) };
hidden byte tkind[NT] = { TASKS(KINDX) };
hidden byte targ[NT] = { TASKS(ARGX) };
hidden byte targ2[NT] = { TASKS(ARG2X) };

/* ------------------------------------------------------------ the state */
/* struct inode / struct fuse_inode */
byte i_size = ISIZE0;
bool size_unstable;
short writectr;                 /* fi->writectr, FUSE_NOWRITE included */
byte wq_first[MAXQ];            /* fi->queued_writes (FIFO of wpa) */
byte wq_n[MAXQ];
byte wq_len;
byte rw_owner = NONE;           /* inode->i_rwsem, exclusive owner */
/* page cache */
byte pf[NP] = { PAGES(INIT_FLAGS) };
byte pv[NP] = { PAGES(INIT_VER) };
/* kernel tasks: program counter, phase, cursor and stack locals */
byte pc[NT];
byte ph[NT];
byte cur[NT];
byte bfirst[NT];
byte bn[NT];
byte reply[NT] = NONE;
byte saved[NT];
int before[NT * NP];            /* ghost: fin at the write's syscall entry */
/* /dev/fuse */
byte fq_k[MAXQ];
byte fq_a[MAXQ];
byte fq_b[MAXQ];
byte fq_c[MAXQ];
byte fq_len;
/* the daemon's workers: state, request, WRITE payload */
byte w_st[NW];
byte w_k[NW];
byte w_a[NW];
byte w_b[NW];
byte w_c[NW];
byte w_pay[NW * NP] = NONE;
/* the server's file */
byte srv_size = INIT_SIZE;
byte srv[NP] = { PAGES(INIT_SRV) };
/* ghosts */
int hist[NP] = { PAGES(INIT_HIST) };  /* data versions in order, 4 bits each */
int fin[NP] = { PAGES(INIT_FIN) };    /* versions whose write has ended */
int sup[NP] = { PAGES(INIT_SUP) };    /* versions superseded */
byte drops[NP];                       /* data discarded beyond EOF */
byte wrote_once;                      /* pages a cache WRITE completed */
byte viol;                            /* sticky violation bits */
byte ev;                              /* what the last step did */

/* --------------------------------------------------------- scratch */
hidden byte t_, p_, q_, i_, j_, f_, n_, c_, k_, a_, b_, lo_, hi_, v_;
hidden byte pa_, pb_, hl_, fs_, fn_, fc_;
hidden int h_;
hidden byte old_;
hidden byte ok_;
/* named property results, so that pan names the property it reports */
hidden byte a1, a2, a3, c1, e, g_bugon;

/* ------------------------------------------------------------ helpers */
#define OPI(t) (((t) * MAXOPS + pc[t]) * 4)
#define OPC(t) prog[OPI(t)]
#define OPA(t) prog[OPI(t) + 1]
#define OPB(t) prog[OPI(t) + 2]
#define OPX(t) prog[OPI(t) + 3]
#define DONE(t) (OPC(t) == O_END)

#define HAS(p, f) ((pf[p] & (f)) != 0)
#define ALL(p, m) ((pf[p] & (m)) == (m))
#define MAX(a, b) ((a) > (b) -> (a) : (b))

/* FIRST(k, hi, m): the first page q in k..hi-1 whose flags include all
 * of m, or NONE */
#define FIRST(k, hi, m) FIRST0(k, hi, m)
#define FIRST0(k, hi, m) (((k) <= 0 && 0 < (hi) && ALL(0, m)) -> 0 : FIRST1(k, hi, m))
#if NP > 1
#define FIRST1(k, hi, m) (((k) <= 1 && 1 < (hi) && ALL(1, m)) -> 1 : FIRST2(k, hi, m))
#else
#define FIRST1(k, hi, m) NONE
#endif
#if NP > 2
#define FIRST2(k, hi, m) (((k) <= 2 && 2 < (hi) && ALL(2, m)) -> 2 : FIRST3(k, hi, m))
#else
#define FIRST2(k, hi, m) NONE
#endif
#if NP > 3
#define FIRST3(k, hi, m) (((k) <= 3 && 3 < (hi) && ALL(3, m)) -> 3 : NONE)
#else
#define FIRST3(k, hi, m) NONE
#endif

/* the lowest idle worker is w: w idle, every worker below it busy */
#define READER(w) (w_st[w] == W_IDLE && ((w) < 1 || w_st[0] != W_IDLE) && \
                   ((w) < 2 || w_st[1] != W_IDLE))

#define VERSION_OF(t) ((t) + 2)
/* ghost fields of tasks this family does not have (fsync's snapshot,
 * a direct writer's `applied`): constant */
#define SNAP(t, p) NONE
#define APPLIED(t) 0

/* the history (common/history.rs): slot 0 always counts, later slots up
 * to the first zero. hpos sets `out` to the slot of version v or NONE. */
#define NIB(h, i) (((h) >> (4 * (i))) & 15)
inline hpos(h, v, out) {
  out = NONE;
  hl_ = 0;
  do
  :: hl_ < 8 && (hl_ == 0 || NIB(h, hl_) != 0) ->
     if
     :: out == NONE && NIB(h, hl_) == v -> out = hl_
     :: else
     fi;
     hl_++
  :: else -> break
  od
}
/* last_zeros (ghost.rs): the newest version in a history that stands
 * for zeros: never written (0) or a truncating task's version */
inline last_zeros(h, out) {
  out = 0;
  hl_ = 0;
  do
  :: hl_ < 8 && (hl_ == 0 || NIB(h, hl_) != 0) ->
     if
     :: NIB(h, hl_) == 0 -> out = 0
     :: NIB(h, hl_) >= 2 && NIB(h, hl_) - 2 < NT && tkind[NIB(h, hl_) - 2] == K_TRUNC ->
        out = NIB(h, hl_)
     :: else
     fi;
     hl_++
  :: else -> break
  od
}
/* hist_push: the version becomes current */
inline hpush(p, v) {
  hl_ = 1;
  do
  :: hl_ < 8 && NIB(hist[p], hl_) != 0 -> hl_++
  :: else -> break
  od;
  hist[p] = hist[p] | ((v) << (4 * hl_))
}

/* fuse_writepage_finish (T): folio_end_writeback on every folio */
inline writepage_finish(first, n) {
  for (j_ : first .. first + n - 1) {
    pf[j_] = pf[j_] & ~(PG_WRITEBACK | PG_RECLAIM)
  }
}

inline fq_push(k, a, b, c) {
  assert(fq_len < MAXQ);
  fq_k[fq_len] = k; fq_a[fq_len] = a; fq_b[fq_len] = b; fq_c[fq_len] = c;
  fq_len++
}

/* fuse_send_writepage(wpa = first..first+n-1, crop) */
inline send_writepage(first, n, crop) {
  /* ghost: the data beyond the crop is discarded unsent */
  for (i_ : MAX(crop, first) .. first + n - 1) {
    drops[i_]++
  }
  writectr++;
  if
  :: first + n <= crop -> fq_push(K_CW, first, n, n)
  :: first < crop && first + n > crop ->
     fq_push(K_CW, first, n, crop - first);
     ev = EV_CROP
  :: else ->
     /* out_free: "Got truncated off completely" */
     writectr--;
     writepage_finish(first, n);
     ev = EV_DROP
  fi
}

/* fuse_flush_writepages: send queued WRITEs while writectr >= 0, cropped
 * at i_size sampled once */
inline flush_writepages() {
  c_ = i_size;
  do
  :: (writectr >= 0 || MUT_FLUSH_IGNORES_NOWRITE || P_NO_WRITECTR) && wq_len > 0 ->
     fs_ = wq_first[0];
     fn_ = wq_n[0];
     for (k_ : 1 .. wq_len - 1) {
       wq_first[k_ - 1] = wq_first[k_];
       wq_n[k_ - 1] = wq_n[k_]
     }
     wq_len--;
     wq_first[wq_len] = 0;
     wq_n[wq_len] = 0;
     send_writepage(fs_, fn_, c_)
  :: else -> break
  od
}

/* fuse_writepages_send / fuse_writepage_locked's tail: queue and flush */
inline queue_writepage(first, n) {
  assert(wq_len < MAXQ);
  wq_first[wq_len] = first;
  wq_n[wq_len] = n;
  wq_len++;
  flush_writepages()
}

/* __fuse_release_nowrite */
inline release_nowrite() {
  if
  :: writectr != FUSE_NOWRITE -> viol = viol | VIOL_BUG
  :: else
  fi;
  writectr = 0;
  flush_writepages()
}

/* fuse_set_nowrite's first half (BUG_ON if already negative) */
inline set_nowrite() {
  if
  :: writectr < 0 -> viol = viol | VIOL_BUG
  :: else -> writectr = writectr + FUSE_NOWRITE
  fi
}

/* FuseModel::advance: next op, then skip the ops with nothing to do
 * (skip_empty), in the same step */
inline advance(t) {
  pc[t]++;
  ph[t] = 0;
  cur[t] = 0;
  do
  :: OPC(t) == O_TPC &&
     (saved[t] == i_size || FIRST(i_size, NP, PG_PRESENT) == NONE) ->
     pc[t]++; ph[t] = 0; cur[t] = 0
  :: OPC(t) == O_INVALIDATE &&
     ((OPX(t) && saved[t] == i_size) ||
      FIRST(OPA(t), OPA(t) + OPB(t), PG_PRESENT) == NONE) ->
     pc[t]++; ph[t] = 0; cur[t] = 0
  :: else -> break
  od
}

/* ghost: a write's syscall window (ghost.rs): the pages the task may
 * write, all for a truncate, A..A+N-1 for `write A+N` */
#define WLO(t) (tkind[t] == K_TRUNC -> 0 : targ[t])
#define WHI(t) (tkind[t] == K_TRUNC -> NP : targ[t] + targ2[t])
inline window_open(t) {
  for (q_ : WLO(t) .. WHI(t) - 1) {
    before[(t) * NP + q_] = fin[q_]
  }
}
inline window_close(t) {
  for (q_ : WLO(t) .. WHI(t) - 1) {
    hpos(hist[q_], VERSION_OF(t), pa_);
    if
    :: pa_ != NONE ->
       sup[q_] = sup[q_] | before[(t) * NP + q_];
       fin[q_] = fin[q_] | (1 << VERSION_OF(t))
    :: else
    fi
  }
}

/* folio_clear_dirty_for_io + fuse_writepages_fill + folio_unlock (T) */
inline fill_send(t, p) {
  pf[p] = (pf[p] & ~(PG_DIRTY | PG_TOWRITE | PG_LOCKED)) | PG_WRITEBACK;
  /* fuse_writepage_need_send: max_pages, or not contiguous */
  if
  :: bn[t] > 0 && (bn[t] + 1 > MAX_PAGES || bfirst[t] + bn[t] != p) ->
     queue_writepage(bfirst[t], bn[t]);
     bn[t] = 0
  :: else
  fi;
  if
  :: bn[t] == 0 -> bfirst[t] = p
  :: else
  fi;
  bn[t]++;
  cur[t] = p + 1
}

/* folio_clear_dirty_for_io + fuse_writepages_fill + folio_unlock (T);
 * with IOMAP_WB_EOF (6.17+ iomap writeback) a folio wholly beyond i_size
 * is only unlocked: iomap_writeback_handle_eof, no writeback, no WRITE */
inline fill(t, p) {
  if
  :: IOMAP_WB_EOF && p >= i_size ->
     if
     :: HAS(p, PG_DIRTY) -> drops[p]++
     :: else
     fi;
     pf[p] = pf[p] & ~(PG_DIRTY | PG_LOCKED);
     ev = EV_WB_EOF_SKIP;
     cur[t] = p + 1
  :: else -> fill_send(t, p)
  fi
}


/* the folio leaves the page cache */
inline remove_page(p) {
  pf[p] = 0;
  pv[p] = 0
}

/* invalidate_inode_pages2: remove, then on to the next present folio */
inline remove_and_next(t, p, end) {
  remove_page(p);
  ph[t] = 0;
  cur[t] = p + 1;
  if
  :: FIRST(p + 1, end, PG_PRESENT) == NONE -> advance(t)
  :: else
  fi
}

/* invalidate: fuse_launder_folio for a dirty folio, else remove */
inline launder_or_remove(t, p) {
  if
  :: HAS(p, PG_DIRTY) ->
     pf[p] = (pf[p] & ~(PG_DIRTY | PG_TOWRITE)) | PG_WRITEBACK;
     queue_writepage(p, 1);
     ph[t] = 2
  :: else ->
     remove_and_next(t, p, OPA(t) + OPB(t))
  fi
}

/* ------------------------------------------------------------ properties */
/* a1: no writeback WRITE outstanding (queued on /dev/fuse or being
 * handled, not yet replied) together with a SETATTR */
inline check_a1() {
  ok_ = false;   /* a SETATTR outstanding */
  a1 = false;    /* a cache WRITE outstanding */
  for (k_ : 0 .. MAXQ - 1) {
    if
    :: k_ < fq_len && fq_k[k_] == K_SETATTR -> ok_ = true
    :: k_ < fq_len && fq_k[k_] == K_CW -> a1 = true
    :: else
    fi
  }
  for (k_ : 0 .. NW - 1) {
    if
    :: w_st[k_] == W_BUSY && w_k[k_] == K_SETATTR -> ok_ = true
    :: w_st[k_] == W_BUSY && w_k[k_] == K_CW -> a1 = true
    :: else
    fi
  }
  a1 = !(ok_ && a1);
  assert(a1)
}

/* c1: at most one page-cache WRITE in flight per page */
inline check_c1() {
  c1 = true;
  for (q_ : 0 .. NP - 1) {
    v_ = 0;
    for (k_ : 0 .. MAXQ - 1) {
      if
      :: k_ < fq_len && fq_k[k_] == K_CW && fq_a[k_] <= q_ && q_ < fq_a[k_] + fq_c[k_] -> v_++
      :: else
      fi
    }
    for (k_ : 0 .. NW - 1) {
      if
      :: w_st[k_] == W_BUSY && w_k[k_] == K_CW && w_a[k_] <= q_ && q_ < w_a[k_] + w_c[k_] -> v_++
      :: w_st[k_] == W_ENDING && w_a[k_] <= q_ && q_ < w_a[k_] + w_b[k_] -> v_++
      :: else
      fi
    }
    c1 = c1 && v_ <= 1
  }
  assert(c1)
}

/* everything finished (model.rs all_finished) */
inline all_finished(out) {
  out = fq_len == 0 && wq_len == 0;
  for (k_ : 0 .. NT - 1) {
    out = out && prog[(k_ * MAXOPS + pc[k_]) * 4] == O_END
  }
  for (k_ : 0 .. NW - 1) {
    out = out && w_st[k_] == W_IDLE
  }
}

/* a3: quiescent => server size == i_size and each page holds the data of
 * a write no other write really-follows */
inline check_a3() {
  all_finished(a3);
  a3 = a3 && writectr == 0;
  for (q_ : 0 .. NP - 1) {
    a3 = a3 && !HAS(q_, PG_DIRTY | PG_WRITEBACK)
  }
  if
  :: a3 ->
     a3 = srv_size == i_size;
     for (q_ : 0 .. NP - 1) {
       a3 = a3 && (q_ >= i_size ||
                   (srv[q_] != NONE && ((fin[q_] & ~sup[q_]) >> srv[q_]) & 1))
     }
  :: else -> a3 = true
  fi;
  assert(a3)
}


/* DUMP (debugging aid): print each step's target state in the format of
 * checks/examples/twin_dump.rs (compile pan with -DPRINTF) */
inline dump() {
#ifdef DUMP
  printf("I%d U%d W%d Q", i_size, size_unstable, writectr);
  for (k_ : 0 .. wq_len - 1) { printf("%d.%d,", wq_first[k_], wq_n[k_]) }
  printf(" O%d P", rw_owner);
  for (k_ : 0 .. NP - 1) { printf("%d.%d,", pf[k_], pv[k_]) }
  printf(" T");
  for (t_ : 0 .. NT - 1) {
    printf("%d.%d.%d.%d.%d.%d.%d", pc[t_], ph[t_], cur[t_], bfirst[t_], bn[t_], reply[t_], saved[t_]);
    for (k_ : 0 .. NP - 1) { printf(".%d", before[t_ * NP + k_]) }
    for (k_ : 0 .. NP - 1) { printf(".%d", SNAP(t_, k_)) }
    printf(".%d;", APPLIED(t_))
  }
  printf(" F");
  for (k_ : 0 .. fq_len - 1) { printf("%d.%d.%d.%d,", fq_k[k_], fq_a[k_], fq_b[k_], fq_c[k_]) }
  printf(" D");
  for (t_ : 0 .. NW - 1) {
    printf("%d.%d.%d.%d.%d", w_st[t_], w_k[t_], w_a[t_], w_b[t_], w_c[t_]);
    for (k_ : 0 .. NP - 1) { printf(".%d", w_pay[t_ * NP + k_]) }
    printf(";")
  }
  printf(" S%d V", srv_size);
  for (k_ : 0 .. NP - 1) { printf("%d.%d.%d.%d.%d,", srv[k_], hist[k_], fin[k_], sup[k_], drops[k_]) }
  printf(" O%d B%d E%d\n", wrote_once, viol, ev)
#else
  skip
#endif
}

inline check() {
  dump();
  check_a1();
  a2 = (viol & VIOL_A2) == 0;
  assert(a2);
  check_a3();
  check_c1();
  g_bugon = (viol & VIOL_BUG) == 0;
  assert(g_bugon)
}

/* ------------------------------------------------------------ tasks */
#define T _pid

active [NT] proctype Task() {
end:
  do
  /* inode_lock */
  :: d_step { OPC(T) == O_INODELOCK && rw_owner == NONE ->
       ev = EV_NONE;
       rw_owner = T;
       if
       :: pc[T] == 0 -> window_open(T)
       :: else
       fi;
       advance(T);
       check() }
  /* fuse_set_nowrite: writectr += FUSE_NOWRITE */
  :: d_step { OPC(T) == O_SETNOWRITE ->
       ev = EV_NONE;
       set_nowrite();
       advance(T);
       check() }
  /* fuse_set_nowrite: wait_event(writectr == FUSE_NOWRITE) */
  :: d_step { OPC(T) == O_WAITNOWRITE && writectr == FUSE_NOWRITE ->
       ev = EV_NONE;
       advance(T);
       check() }
  /* fuse_do_setattr: FUSE_I_SIZE_UNSTABLE, send SETATTR(size) */
  :: d_step { OPC(T) == O_SEND_SETATTR ->
       ev = EV_NONE;
       size_unstable = true;
       saved[T] = i_size;
       fq_push(K_SETATTR, T, targ[T], 0);
       reply[T] = NONE;
       advance(T);
       check() }
  /* fuse_do_setattr: i_size_write, __fuse_release_nowrite */
  :: d_step { OPC(T) == O_RECV_SETATTR && reply[T] != NONE ->
       ev = EV_NONE;
       v_ = reply[T];
       reply[T] = NONE;
       if
       :: OPA(T) && MUT_CROP_OLD_SIZE ->
          release_nowrite();
          i_size = v_
       :: else ->
          i_size = v_;
          if
          :: OPA(T) -> release_nowrite()
          :: else
          fi
       fi;
       advance(T);
       check() }
  /* truncate_pagecache: per folio beyond EOF lock, wait, remove */
  :: d_step { OPC(T) == O_TPC &&
       (FIRST(MAX(cur[T], i_size), NP, PG_PRESENT) == NONE ||
        (ph[T] == 0 && !HAS(FIRST(MAX(cur[T], i_size), NP, PG_PRESENT), PG_LOCKED)) ||
        (ph[T] != 0 && !HAS(FIRST(MAX(cur[T], i_size), NP, PG_PRESENT), PG_WRITEBACK))) ->
       ev = EV_NONE;
       p_ = FIRST(MAX(cur[T], i_size), NP, PG_PRESENT);
       if
       :: p_ == NONE -> advance(T)
       :: p_ != NONE && ph[T] == 0 ->
          pf[p_] = pf[p_] | PG_LOCKED;
          ph[T] = (HAS(p_, PG_WRITEBACK) -> 1 : 2);
          cur[T] = p_
       :: else ->
          if
          :: HAS(p_, PG_DIRTY) -> drops[p_]++
          :: else
          fi;
          remove_page(p_);
          ph[T] = 0;
          cur[T] = p_ + 1;
          if
          :: FIRST(p_ + 1, NP, PG_PRESENT) == NONE -> advance(T)
          :: else
          fi
       fi;
       check() }
  /* invalidate_inode_pages2, phase 0: the next folio, folio_lock */
  :: d_step { OPC(T) == O_INVALIDATE && ph[T] == 0 &&
       (FIRST(MAX(OPA(T), cur[T]), OPA(T) + OPB(T), PG_PRESENT) == NONE ||
        !HAS(FIRST(MAX(OPA(T), cur[T]), OPA(T) + OPB(T), PG_PRESENT), PG_LOCKED)) ->
       ev = EV_NONE;
       p_ = FIRST(MAX(OPA(T), cur[T]), OPA(T) + OPB(T), PG_PRESENT);
       if
       :: p_ == NONE -> advance(T)
       :: else ->
          pf[p_] = pf[p_] | PG_LOCKED;
          cur[T] = p_;
          if
          :: HAS(p_, PG_WRITEBACK) -> ph[T] = 1
          :: !HAS(p_, PG_WRITEBACK) && !HAS(p_, PG_DIRTY) -> ph[T] = 5
          :: else -> launder_or_remove(T, p_)
          fi
       fi;
       check() }
  /* invalidate: a clean locked folio is removed */
  :: d_step { OPC(T) == O_INVALIDATE && ph[T] == 5 ->
       ev = EV_NONE;
       p_ = cur[T];
       remove_and_next(T, p_, OPA(T) + OPB(T));
       check() }
  /* invalidate: folio_wait_writeback, then launder or remove */
  :: d_step { OPC(T) == O_INVALIDATE && ph[T] == 1 && !HAS(cur[T], PG_WRITEBACK) ->
       ev = EV_NONE;
       p_ = cur[T];
       launder_or_remove(T, p_);
       check() }
  /* invalidate: fuse_launder_folio's folio_wait_writeback, remove */
  :: d_step { OPC(T) == O_INVALIDATE && ph[T] == 2 && !HAS(cur[T], PG_WRITEBACK) ->
       ev = EV_NONE;
       p_ = cur[T];
       remove_and_next(T, p_, OPA(T) + OPB(T));
       check() }
  /* fuse_release_nowrite (the mutant's order) */
  :: d_step { OPC(T) == O_RELEASE_NOWRITE ->
       ev = EV_NONE;
       release_nowrite();
       advance(T);
       check() }
  /* fuse_do_setattr's end: clear FUSE_I_SIZE_UNSTABLE, inode_unlock */
  :: d_step { OPC(T) == O_SETATTR_RET ->
       ev = EV_NONE;
       window_close(T);
       size_unstable = false;
       rw_owner = NONE;
       advance(T);
       check() }
  /* generic_perform_write: write_begin (folio_lock; no writeback wait
   * in T), copy, write_end (i_size, folio_mark_dirty), per page */
  :: d_step { OPC(T) == O_COPYPAGES && !HAS(OPA(T) + cur[T], PG_LOCKED) ->
       ev = EV_NONE;
       p_ = OPA(T) + cur[T];
       pf[p_] = pf[p_] | PG_PRESENT | PG_UPTODATE | PG_DIRTY;
       pv[p_] = VERSION_OF(T);
       hpush(p_, VERSION_OF(T));
       if
       :: p_ + 1 > i_size -> i_size = p_ + 1
       :: else
       fi;
       if
       :: cur[T] + 1 >= OPB(T) -> advance(T)
       :: else -> cur[T]++
       fi;
       check() }
  /* inode_unlock; the syscall returns (its window closes) */
  :: d_step { OPC(T) == O_UNLOCK_RETURN ->
       ev = EV_NONE;
       if
       :: OPA(T) -> rw_owner = NONE
       :: else
       fi;
       if
       :: tkind[T] == K_WRITE && prog[OPI(T) + 4] == O_END -> window_close(T)
       :: else
       fi;
       advance(T);
       check() }
  /* write_cache_pages begins; WB_SYNC_ALL tags the dirty folios */
  :: d_step { OPC(T) == O_WRITEPAGES && ph[T] == 0 ->
       ev = EV_NONE;
       if
       :: OPX(T) ->
          for (q_ : OPA(T) .. OPA(T) + OPB(T) - 1) {
            if
            :: ALL(q_, PG_PRESENT | PG_DIRTY) -> pf[q_] = pf[q_] | PG_TOWRITE
            :: else
            fi
          }
       :: else
       fi;
       ph[T] = 1;
       cur[T] = OPA(T);
       bn[T] = 0;
       check() }
  /* writeback_iter + fuse_writepages_fill on the next tagged folio, or
   * the end of the walk (fuse_writepages_send of the last batch) */
  :: d_step { OPC(T) == O_WRITEPAGES && ph[T] == 1 &&
       (FIRST(cur[T], OPA(T) + OPB(T), PG_PRESENT | (OPX(T) -> PG_TOWRITE : PG_DIRTY)) == NONE ||
        !HAS(FIRST(cur[T], OPA(T) + OPB(T), PG_PRESENT | (OPX(T) -> PG_TOWRITE : PG_DIRTY)), PG_LOCKED)) ->
       ev = EV_NONE;
       p_ = FIRST(cur[T], OPA(T) + OPB(T), PG_PRESENT | (OPX(T) -> PG_TOWRITE : PG_DIRTY));
       if
       :: p_ == NONE ->
          if
          :: bn[T] > 0 -> queue_writepage(bfirst[T], bn[T])
          :: else
          fi;
          bn[T] = 0;
          advance(T)
       :: p_ != NONE && (!HAS(p_, PG_DIRTY) ||
            (HAS(p_, PG_WRITEBACK) && !OPX(T) && !MUT_WB_IGNORES_WRITEBACK)) ->
          /* folio_prepare_writeback: skip */
          cur[T] = p_ + 1
       :: p_ != NONE && HAS(p_, PG_DIRTY) && HAS(p_, PG_WRITEBACK) && OPX(T) &&
            !MUT_WB_IGNORES_WRITEBACK ->
          /* WB_SYNC_ALL: folio_wait_writeback with the folio locked */
          pf[p_] = pf[p_] | PG_LOCKED;
          cur[T] = p_;
          ph[T] = 2
       :: else ->
          fill(T, p_)
       fi;
       check() }
  /* writeback_iter: the WB_SYNC_ALL folio_wait_writeback ends */
  :: d_step { OPC(T) == O_WRITEPAGES && ph[T] == 2 && !HAS(cur[T], PG_WRITEBACK) ->
       ev = EV_NONE;
       p_ = cur[T];
       ph[T] = 1;
       if
       :: !HAS(p_, PG_DIRTY) ->
          pf[p_] = pf[p_] & ~PG_LOCKED;
          cur[T] = p_ + 1
       :: else -> fill(T, p_)
       fi;
       check() }
  od
}

/* ------------------------------------------------------------ the daemon */
#define W (_pid - NT)

active [NW] proctype Daemon() {
end:
  do
  /* fuse_dev_do_read: the lowest idle worker takes the head request; a
   * writeback WRITE's payload is copied from the folios now */
  :: d_step { fq_len > 0 && READER(W) ->
       ev = EV_NONE;
       w_st[W] = W_BUSY;
       w_k[W] = fq_k[0]; w_a[W] = fq_a[0]; w_b[W] = fq_b[0]; w_c[W] = fq_c[0];
       for (k_ : 1 .. fq_len - 1) {
         fq_k[k_ - 1] = fq_k[k_]; fq_a[k_ - 1] = fq_a[k_];
         fq_b[k_ - 1] = fq_b[k_]; fq_c[k_ - 1] = fq_c[k_]
       }
       fq_len--;
       fq_k[fq_len] = 0; fq_a[fq_len] = 0; fq_b[fq_len] = 0; fq_c[fq_len] = 0;
       if
       :: w_k[W] == K_CW ->
          for (q_ : w_a[W] .. w_a[W] + w_c[W] - 1) {
            w_pay[W * NP + q_] = pv[q_];
            /* a2: no data older than an applied truncation */
            for (t_ : 0 .. NT - 1) {
              if
              :: tkind[t_] == K_TRUNC ->
                 hpos(hist[q_], VERSION_OF(t_), pb_);
                 hpos(hist[q_], pv[q_], pa_);
                 if
                 :: pb_ != NONE && (pa_ == NONE || pa_ < pb_) -> viol = viol | VIOL_A2
                 :: else
                 fi
              :: else
              fi
            }
            if
            :: (wrote_once >> q_) & 1 -> ev = EV_SECOND
            :: else
            fi
          }
       :: else
       fi;
       check() }
  /* the server applies the request and replies */
  :: d_step { w_st[W] == W_BUSY ->
       ev = EV_NONE;
       k_ = w_k[W]; a_ = w_a[W]; b_ = w_b[W]; c_ = w_c[W];
       w_st[W] = W_IDLE; w_k[W] = 0; w_a[W] = 0; w_b[W] = 0; w_c[W] = 0;
       if
       :: k_ == K_CW ->
          for (q_ : a_ .. a_ + c_ - 1) {
            srv[q_] = w_pay[W * NP + q_]
          }
          srv_size = MAX(srv_size, a_ + c_);
          /* fuse_writepage_end pending in this thread */
          w_st[W] = W_ENDING; w_a[W] = a_; w_b[W] = b_
       :: k_ == K_SETATTR ->
          /* ghost: the zeros this truncation makes current, judged
           * against the kernel's i_size when SETATTR was sent (saved) */
          if
          :: b_ < saved[a_] -> lo_ = b_; hi_ = NP
          :: else -> lo_ = saved[a_]; hi_ = b_
          fi;
          for (q_ : lo_ .. hi_ - 1) {
            hpush(q_, VERSION_OF(a_))
          }
          /* the server's file: cut, or extended with zeros; below the
           * kernel's EOF its zero-fill holds the page's last zeros */
          if
          :: b_ < srv_size ->
             for (q_ : b_ .. NP - 1) {
               srv[q_] = VERSION_OF(a_)
             }
          :: else ->
             for (q_ : srv_size .. b_ - 1) {
               if
               :: q_ >= saved[a_] -> srv[q_] = VERSION_OF(a_)
               :: else -> last_zeros(hist[q_], srv[q_])
               fi
             }
          fi;
          srv_size = b_;
          reply[a_] = b_
       :: else
       fi;
       for (q_ : 0 .. NP - 1) {
         w_pay[W * NP + q_] = NONE
       }
       check() }
  /* fuse_writepage_end: writectr--, fuse_writepage_finish */
  :: d_step { w_st[W] == W_ENDING ->
       ev = EV_NONE;
       a_ = w_a[W]; b_ = w_b[W];
       writectr--;
       writepage_finish(a_, b_);
       for (q_ : a_ .. a_ + b_ - 1) {
         wrote_once = wrote_once | (1 << q_)
       }
       w_st[W] = W_IDLE; w_a[W] = 0; w_b[W] = 0;
       check() }
  od
}

/* -------------------------------------------------------- e: deadlock */
/* enabled only when no other step is: then everything must be finished
 * (or the kernel has already oopsed on a BUG_ON, which g-bugon reports) */
active proctype Watchdog() {
end:
  do
  :: atomic { timeout ->
       all_finished(e);
       e = e || (viol & VIOL_BUG) != 0;
       assert(e) }
  od
}
