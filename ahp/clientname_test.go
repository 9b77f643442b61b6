package ahp

import "testing"

// TestClientName: a holder is named as a person knows it, not by its
// client id ("client nvim-2688").
func TestClientName(t *testing.T) {
	tests := []struct{ id, want string }{
		{"nvim-2688", "Neovim 2688"},
		{"cli-77", "agentrun attach 77"},
		{"nvim-", "client nvim-"},
		{"nvim-x1", "client nvim-x1"},
		{"vscode", "client vscode"},
	}
	for _, tc := range tests {
		if got := ClientName(tc.id); got != tc.want {
			t.Errorf("ClientName(%q) = %q, want %q", tc.id, got, tc.want)
		}
	}
}
