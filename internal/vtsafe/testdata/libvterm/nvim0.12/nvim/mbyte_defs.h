#pragma once
#include <utf8proc.h>
typedef utf8proc_int32_t GraphemeState;
#define GRAPHEME_STATE_INIT 0
