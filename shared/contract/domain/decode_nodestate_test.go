package domain_test

import (
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

func TestDecodeNodeState(t *testing.T) {
	st, err := domain.DecodeNodeState([]byte(`{"drained":false,"since":"2026-12-03T06:00:00Z","resumedAt":"2026-12-03T06:00:00Z"}`))
	if err != nil || st.Drained || st.ResumedAt.IsZero() {
		t.Fatalf("%+v %v", st, err)
	}
	for _, bad := range []string{
		`{"drained":"yes"}`,
		`{"drained":true,"reason":"` + strings.Repeat("x", domain.MaxReasonBytes+1) + `"}`,
		`{"resumedAt":"yesterday"}`,
		`[`,
	} {
		if _, err := domain.DecodeNodeState([]byte(bad)); err == nil {
			t.Errorf("accepted %.60s", bad)
		}
	}
}
