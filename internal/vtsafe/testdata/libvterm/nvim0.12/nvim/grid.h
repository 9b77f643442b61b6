#pragma once
#include <stddef.h>
#include "nvim/types_defs.h"
schar_T schar_from_buf(const char *buf, size_t len);
schar_T schar_from_ascii(char c);
