// Stand-ins for the Neovim headers that Neovim 0.12's vterm port
// (src/nvim/vterm) includes, so the harness can build it alone. Only what
// the port uses; shim.c holds the functions.
#pragma once
#include <stdint.h>
typedef uint32_t schar_T;
#define MAX_SCHAR_SIZE 32
