// shim.c gives Neovim 0.12's vterm port the few functions of Neovim's it
// calls (mbyte.c, grid.c, memory.c), written after Neovim 0.12.4's own:
// grapheme clusters and widths from utf8proc (Neovim links it too; the
// harness uses the system's, which may know an older Unicode), with the
// defaults of the options they read ('ambiwidth' single, 'emoji' and
// 'arabicshape' on, no 'setcellwidths'), and Neovim's list of what it
// cannot print (shown as <xxxx>, 6 columns).
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <utf8proc.h>

#include "nvim/grid.h"
#include "nvim/mbyte.h"
#include "nvim/memory.h"

void *xmalloc(size_t size) {
  void *p = malloc(size ? size : 1);
  if (!p) abort();
  return p;
}

void xfree(void *ptr) { free(ptr); }

bool utf_iscomposing(int c1, int c2, GraphemeState *state) {
  // arabic_combine: with 'arabicshape' on, LAM and an ALEF form one cell.
  bool arabic = c1 == 0x644 && (c2 == 0x622 || c2 == 0x623 || c2 == 0x625 || c2 == 0x627);
  return !utf8proc_grapheme_break_stateful(c1, c2, state) || arabic;
}

int utf_char2bytes(int c, char *buf) {
  return (int)utf8proc_encode_char(c, (utf8proc_uint8_t *)buf);
}

static bool utf_printable(int c) {
  static const int nonprint[][2] = {
    {0x070f, 0x070f}, {0x180b, 0x180e}, {0x200b, 0x200f}, {0x202a, 0x202e},
    {0x2060, 0x206f}, {0xd800, 0xdfff}, {0xfeff, 0xfeff}, {0xfff9, 0xfffb},
    {0xfffe, 0xffff},
  };
  for (size_t i = 0; i < sizeof nonprint / sizeof nonprint[0]; i++) {
    if (c >= nonprint[i][0] && c <= nonprint[i][1]) return false;
  }
  return true;
}

static bool vim_isprintc(int c) {
  if (c >= 0x100) return utf_printable(c);
  return c >= 0xa0;  // 'isprint' "@,161-255" with UTF-8: from 0xa0
}

static bool emojilike(const utf8proc_property_t *prop) {
  return prop->boundclass == UTF8PROC_BOUNDCLASS_EXTENDED_PICTOGRAPHIC ||
         prop->boundclass == UTF8PROC_BOUNDCLASS_REGIONAL_INDICATOR;
}

// ambiguous: East Asian Width "A" (utf8proc knows it from 2.9 on; the
// ones above U+1F000, where it matters here, are few).
static bool ambiguous(int c) {
#if UTF8PROC_VERSION_MAJOR > 2 || UTF8PROC_VERSION_MINOR >= 9
  return utf8proc_get_property(c)->ambiguous_width;
#else
  static const int a[][2] = {{0x1f100, 0x1f10a}, {0x1f110, 0x1f12d}, {0x1f130, 0x1f169}, {0x1f170, 0x1f18d}, {0x1f18f, 0x1f190}, {0x1f19b, 0x1f1ac}};
  for (size_t i = 0; i < sizeof a / sizeof a[0]; i++) {
    if (c >= a[i][0] && c <= a[i][1]) return true;
  }
  return false;
#endif
}

static int utf_char2cells(int c) {
  if (c < 0x80) return 1;
  if (!vim_isprintc(c)) return c > 0xff ? 6 : 4;
  const utf8proc_property_t *prop = utf8proc_get_property(c);
  if (prop->charwidth == 2) return 2;
  if (c >= 0x1f000 && !ambiguous(c) && emojilike(prop)) return 2;
  return 1;
}

// decode reads one UTF-8 character of p (at most size bytes); it returns
// its length, 0 when it is cut short, -1 when it is not UTF-8.
static int decode(const char *p, int size, int *c) {
  utf8proc_int32_t cp;
  utf8proc_ssize_t n = utf8proc_iterate((const utf8proc_uint8_t *)p, size, &cp);
  if (n < 0) {
    int want = ((uint8_t)p[0] & 0xe0) == 0xc0 ? 2 : ((uint8_t)p[0] & 0xf0) == 0xe0 ? 3 : ((uint8_t)p[0] & 0xf8) == 0xf0 ? 4 : 1;
    return want > size ? 0 : -1;
  }
  *c = cp;
  return (int)n;
}

int utf_ptr2cells_len(const char *p, int size) {
  if (size > 0 && (uint8_t)(*p) >= 0x80) {
    int c;
    int len = decode(p, size, &c);
    if (len == 0) return 1;  // truncated
    if (len < 0 || c == 0) return 4;  // an illegal byte is shown as <xx>
    int cells = utf_char2cells(c);
    if (cells == 1 && size > len && emojilike(utf8proc_get_property(c))) {
      int c2;
      if (decode(p + len, size - len, &c2) > 0 && c2 == 0xfe0f) return 2;  // emoji presentation
    }
    return cells;
  }
  return 1;
}

// A glyph of up to four bytes is its bytes, as in Neovim; a longer one
// gets a number of its own (Neovim keeps those in a glyph cache).
schar_T schar_from_buf(const char *buf, size_t len) {
  static char **cache;
  static size_t ncache;
  if (len <= 4) {
    schar_T sc = 0;
    memcpy(&sc, buf, len);
    return sc;
  }
  for (size_t i = 0; i < ncache; i++) {
    if (strlen(cache[i]) == len && memcmp(cache[i], buf, len) == 0) return 0xff000000u | (schar_T)i;
  }
  cache = realloc(cache, sizeof(char *) * (ncache + 1));
  cache[ncache] = strndup(buf, len);
  return 0xff000000u | (schar_T)ncache++;
}

schar_T schar_from_ascii(char c) { return (schar_T)(uint8_t)c; }
