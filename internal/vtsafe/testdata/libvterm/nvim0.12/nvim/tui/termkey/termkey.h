#pragma once
// screen.c includes it; nothing of it is used without the keyboard.
