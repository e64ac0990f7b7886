package domain_test

import (
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

func TestUserNameRuleAtItsBounds(t *testing.T) {
	for in, ok := range map[string]bool{
		"a":                     true,
		"":                      false,
		strings.Repeat("a", 63): true,
		strings.Repeat("a", 64): false,
		"0_a-b":                 true,
		"_a":                    false,
		"a.b":                   false,
		"A":                     false,
		"a*":                    false,
	} {
		if domain.ValidUserName(in) != ok {
			t.Errorf("%q (%d bytes): valid %v, want %v", in, len(in), !ok, ok)
		}
	}
}
