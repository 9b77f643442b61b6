// Package question is how the backend asks the user something and waits
// for the answer: each open question (a permission request, a command's
// approval, an agent's form) has a fresh token, its asking event goes to
// Lua through the event queue (internal/event), and Lua's
// "answer_question" comes back here; a question its turn no longer needs
// is withdrawn, and Lua told. IDs hands out the tokens and the session
// keys, with the site's suffix on a backend on another machine.
package question
