package acp

import (
	"reflect"
	"strings"
	"testing"
)

// TestFormFields: a form's properties come out in the order the agent
// wrote them (a Go map would lose it), and a schema that cannot be asked
// is refused naming what is wrong.
func TestFormFields(t *testing.T) {
	tests := []struct {
		name, schema string
		names        []string
		required     []string
		err          string
	}{
		{name: "order kept", schema: `{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"boolean"},"mid":{"type":"integer"}},"required":["mid"]}`,
			names: []string{"zeta", "alpha", "mid"}, required: []string{"mid"}},
		{name: "no properties", schema: `{"type":"object"}`, names: []string{}},
		{name: "missing", schema: ``, err: "missing"},
		{name: "property without a type", schema: `{"properties":{"x":{"title":"X"}}}`, err: `property "x" has no type`},
		{name: "required unknown", schema: `{"properties":{"x":{"type":"string"}},"required":["y"]}`, err: `required names "y"`},
		{name: "properties not an object", schema: `{"properties":[1]}`, err: "not an object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fields, req, err := formFields([]byte(tc.schema))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			names := []string{}
			for _, f := range fields {
				names = append(names, f.Name)
			}
			if !reflect.DeepEqual(names, tc.names) || !reflect.DeepEqual(req, tc.required) {
				t.Errorf("fields %v required %v, want %v and %v", names, req, tc.names, tc.required)
			}
		})
	}
}
