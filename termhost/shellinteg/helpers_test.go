package shellinteg

// testTerm is the terminal URI the parser tests put on every action.
const testTerm = "agenthost:/terminal/t1"

func intp(n int) *int       { return &n }
func int64p(n int64) *int64 { return &n }
