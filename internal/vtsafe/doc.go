// Package vtsafe makes a terminal byte stream safe to hand to the libvterm
// inside Neovim (nvim_chan_send on a terminal from nvim_open_term).
//
// Two things in ordinary-looking output take Neovim down, found by trying
// and by the display fuzzer (tests/displayfuzz_test.go):
//
//   - A C1 control (U+0080–U+009F) written as UTF-8. libvterm 0.1 (Neovim
//     0.7) and 0.3 (Neovim 0.10) give it a width of -1; printed in insert
//     mode (CSI 4 h) that makes vterm_scroll_rect memcpy a negative length,
//     and Neovim crashes: printf '\033[4h\302\205x'. Outside insert mode
//     the cursor moves backwards over what was printed. libvterm keeps a
//     half-decoded character across controls and escape sequences, so
//     "\302" ESC [ m "\205" is a C1 character too.
//
//   - REP (CSI Ps b, repeat the previous character) unless the previous
//     character is one column wide. Before anything was printed (every
//     version, 0.12 included) or after a zero-width character (0.7, 0.10)
//     libvterm loops forever advancing the cursor by 0 and Neovim hangs:
//     printf '\033[b' as a command's first output. After a wide character
//     it writes the last copy past the end of the row and Neovim crashes
//     (every version): printf 'x日\033[99b'.
//
//   - An invisible format character (Unicode Cf: U+200B zero width space,
//     U+FEFF byte order mark, U+2060 word joiner, bidi controls, …) in a
//     terminal 2 to 5 columns wide crashes Neovim 0.12: printf 'x\342\200\213'.
//
// The rules, chosen to change nothing else (colours, cursor movement,
// progress bars and full-screen programs work as before):
//
//   - The output is valid UTF-8 without C1 code points: each C1 character,
//     and each byte that is not part of a valid UTF-8 encoding (libvterm
//     shows those as U+FFFD too), becomes U+FFFD. An incomplete character
//     (and an incomplete escape sequence begun in text) at the end of a
//     chunk is held back until the next chunk completes it
//     (or shows it was not one). Bytes below 0x80 pass as they are.
//
//   - Format characters are dropped (they show nothing), except the
//     zero-width joiners U+200C and U+200D that emoji and scripts need,
//     and the soft hyphen U+00AD, which terminals show as a hyphen.
//
//   - The filter follows the VT parser (ground, escape, CSI, strings) and
//     whether the last character printed is surely one column wide (ASCII,
//     other alphabets, punctuation, box drawing). Otherwise the final "b"
//     of a CSI becomes CAN (0x18), which aborts the sequence in every
//     libvterm. Where the filter's model and libvterm's could disagree, it
//     errs towards "inside a sequence" and "not narrow", so at worst a
//     harmless REP is dropped (the row then lacks the repeated copies).
//
//   - Where the libvterm versions would read a sequence differently, the
//     filter makes them agree instead of guessing which one runs: ESC,
//     intermediates, then [ ] or P start a CSI or string in 0.1 and end
//     the escape in 0.3 and 0.12, so a CAN takes the byte's place; an ESC inside a string that is not ST is followed by a CAN;
//     DCS, SOS, PM and APC strings (0.1 prints the last three) are
//     dropped, and so are controls inside strings (libvterm runs them).
//
//   - Widths are judged by the tables libvterm 0.1 and 0.3 use (Markus
//     Kuhn's of 2007) as well as today's Unicode (0.12): U+06DE is
//     combining there; the kana voicing marks, combining and 2 columns
//     wide there, become their spacing forms; what 0.12 shows as <xxxx>
//     (6 columns) is dropped, a joiner with nothing to join too.
//
//   - Neovim resizes a terminal between two writes and libvterm keeps what
//     no longer fits (the cursor above the screen in 0.1, a scroll region
//     or margin beyond it in every version, a saved cursor below it):
//     Filter.Guard starts every write, DECRC is followed by the clamp.
//
// The same rules run for every supported version (one place, no version
// checks): Neovim 0.12's own vterm survives C1 characters, but the filter
// costs it nothing visible, and REP hangs 0.12 too. libvterm_test.go fuzzes
// the filter's output into libvterm 0.1, 0.3 and 0.12's port themselves.
package vtsafe
