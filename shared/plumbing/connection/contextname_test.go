package connection

import (
	"strings"
	"testing"
)

func TestContextNameRuleAtItsBounds(t *testing.T) {
	for in, ok := range map[string]bool{
		"dev":                   true,
		"":                      false,
		strings.Repeat("a", 63): true,
		strings.Repeat("a", 64): false,
		"0.prod_east-1":         true,
		".dev":                  false,
		"-dev":                  false,
		"a b":                   false,
		"a/b":                   false,
	} {
		if err := ValidContextName(in); (err == nil) != ok {
			t.Errorf("%q (%d bytes): %v, want valid %v", in, len(in), err, ok)
		}
	}
}
