#pragma once
#include <stdbool.h>
#include <stddef.h>
#include "nvim/mbyte_defs.h"
#include "nvim/types_defs.h"
#include "nvim/macros_defs.h"
bool utf_iscomposing(int c1, int c2, GraphemeState *state);
int utf_char2bytes(int c, char *buf);
int utf_ptr2cells_len(const char *p, int size);
