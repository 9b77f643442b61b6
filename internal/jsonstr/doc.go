// Package jsonstr encodes bytes as a JSON string, as encoding/json does
// with HTML escaping off, but without reflection and several times faster:
// runs of plain ASCII are found eight bytes at a time and copied whole.
//
// It exists for the two places where megabytes of terminal text become
// JSON: termhost's Store keeps an escaped copy of its retained text for
// readers that ask for it again and again, and acp writes that copy into
// terminal/output answers without passing it through encoding/json.
package jsonstr
