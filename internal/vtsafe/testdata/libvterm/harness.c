// harness.c feeds terminal output to one libvterm the way Neovim's
// terminal does, to find what crashes or hangs it (libvterm_test.go builds
// it against each supported version, with AddressSanitizer).
//
// Input on stdin, a sequence of cases; each case is
//
//   'N' u16 rows u16 cols       a new terminal (a case starts with one)
//   'W' u32 len, len bytes      vterm_input_write, then every cell read
//   'R' u16 rows u16 cols       vterm_set_size (a window resized)
//   'E'                         end of the case: "ok\n" on stdout
//
// (little endian). Like Neovim: UTF-8 on, the alternate screen, damage
// merged by scroll, reflow only where Neovim turns it on (0.12, built with
// -DHARNESS_REFLOW; 0.7 and 0.10 leave libvterm's default, off), damage
// flushed after a resize, and a scrollback that keeps the lines pushed out and gives them back when
// the terminal grows (sb_pushline, sb_popline).
//
// A crash is ASan's report on stderr and a non-zero exit; a hang (a REP
// that does not advance loops forever) is "hang" on stderr after a second
// of CPU time (not of the clock: a loaded machine is no hang) and exit
// status 70. The Go side knows which case was in flight.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/time.h>
#include <unistd.h>

#ifdef HARNESS_NVIM
#include "nvim/vterm/vterm.h"
#include "nvim/vterm/screen.h"
#include "nvim/vterm/state.h"
#include "nvim/vterm/vterm_internal_defs.h"
#define VTERM_VERSION_MINOR 12
#define CELL_CHAR(cell) ((unsigned long)(cell).schar)
#else
#include "vterm.h"
#define CELL_CHAR(cell) ((unsigned long)(cell).chars[0])
#endif

#define SB_MAX 200

typedef struct {
  int cols;
  VTermScreenCell *cells;
} sbline;

static sbline sb[SB_MAX];
static int sb_len;
static int rows, cols;
static VTerm *vt;
static VTermScreen *vts;

static void sb_free(void) {
  for (int i = 0; i < sb_len; i++) free(sb[i].cells);
  sb_len = 0;
}

static int on_pushline(int n, const VTermScreenCell *cells, void *user) {
  (void)user;
  if (sb_len == SB_MAX) {
    free(sb[0].cells);
    memmove(&sb[0], &sb[1], sizeof(sb[0]) * (SB_MAX - 1));
    sb_len--;
  }
  sb[sb_len].cols = n;
  sb[sb_len].cells = malloc(sizeof(VTermScreenCell) * (size_t)(n > 0 ? n : 1));
  memcpy(sb[sb_len].cells, cells, sizeof(VTermScreenCell) * (size_t)n);
  sb_len++;
  return 1;
}

static int on_popline(int n, VTermScreenCell *cells, void *user) {
  (void)user;
  if (sb_len == 0) return 0;
  sbline *l = &sb[--sb_len];
  int keep = l->cols < n ? l->cols : n;
  memcpy(cells, l->cells, sizeof(VTermScreenCell) * (size_t)keep);
  for (int i = keep; i < n; i++) {
    memset(&cells[i], 0, sizeof(cells[i]));
    cells[i].width = 1;
  }
  free(l->cells);
  return 1;
}

#if VTERM_VERSION_MINOR >= 3
static int on_sbclear(void *user) {
  (void)user;
  sb_free();
  return 1;
}
#endif

static int on_damage(VTermRect r, void *user) { (void)r; (void)user; return 1; }
static int on_moverect(VTermRect d, VTermRect s, void *user) { (void)d; (void)s; (void)user; return 1; }
static int on_movecursor(VTermPos p, VTermPos o, int v, void *user) { (void)p; (void)o; (void)v; (void)user; return 1; }
static int on_settermprop(VTermProp p, VTermValue *v, void *user) { (void)p; (void)v; (void)user; return 1; }
static int on_bell(void *user) { (void)user; return 1; }

static VTermScreenCallbacks callbacks = {
  .damage = on_damage,
  .moverect = on_moverect,
  .movecursor = on_movecursor,
  .settermprop = on_settermprop,
  .bell = on_bell,
  .sb_pushline = on_pushline,
  .sb_popline = on_popline,
#if VTERM_VERSION_MINOR >= 3
  .sb_clear = on_sbclear,
#endif
};

// readall reads every cell, as Neovim's refresh does.
static unsigned long readall(void) {
  unsigned long sum = 0;
  VTermScreenCell cell;
  for (int r = 0; r < rows; r++) {
    for (int c = 0; c < cols; c++) {
      VTermPos pos = {.row = r, .col = c};
      if (vterm_screen_get_cell(vts, pos, &cell)) sum += CELL_CHAR(cell) + (unsigned long)cell.width;
    }
  }
  return sum;
}

static void close_term(void) {
  if (vt) vterm_free(vt);
  vt = NULL;
  sb_free();
}

static void new_term(int r, int c) {
  close_term();
  rows = r;
  cols = c;
  vt = vterm_new(rows, cols);
  vterm_set_utf8(vt, 1);
  vts = vterm_obtain_screen(vt);
  vterm_screen_enable_altscreen(vts, 1);
#ifdef HARNESS_REFLOW
  vterm_screen_enable_reflow(vts, 1);
#endif
  vterm_screen_set_callbacks(vts, &callbacks, NULL);
  vterm_screen_set_damage_merge(vts, VTERM_DAMAGE_SCROLL);
  vterm_screen_reset(vts, 1);
}

static int readn(void *p, size_t n) { return fread(p, 1, n, stdin) == n; }

// watch arms (or, with 0, disarms) the CPU-time limit of one step.
static void watch(int seconds) {
  struct itimerval t = {.it_value = {.tv_sec = seconds}};
  setitimer(ITIMER_VIRTUAL, &t, NULL);
}

static void on_alarm(int sig) {
  (void)sig;
  static const char msg[] = "hang\n";
  (void)!write(2, msg, sizeof msg - 1);
  _exit(70);
}

int main(void) {
  signal(SIGVTALRM, on_alarm);
  static char buf[1 << 20];
  volatile unsigned long sink = 0;
  int op;
  while ((op = getchar()) != EOF) {
    uint16_t a, b;
    uint32_t n;
    switch (op) {
    case 'N':
    case 'R':
      if (!readn(&a, 2) || !readn(&b, 2)) return 2;
      if (a < 1 || b < 1) return 2;
      watch(1);
      if (op == 'N') {
        new_term(a, b);
      } else {
        rows = a;
        cols = b;
        vterm_set_size(vt, rows, cols);
        vterm_screen_flush_damage(vts);
      }
      sink += readall();
      break;
    case 'W':
      if (!readn(&n, 4) || n > sizeof buf || !readn(buf, n)) return 2;
      watch(1);
      vterm_input_write(vt, buf, n);
      sink += readall();
      break;
    case 'E':
      watch(0);
      fputs("ok\n", stdout);
      fflush(stdout);
      break;
    default:
      return 2;
    }
  }
  close_term();
  return 0;
}
