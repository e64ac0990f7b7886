package discover

import (
	"bytes"
	"os"
	"reflect"
	"testing"
)

// Driver 580's nvidia-smi topo -m underlines its header row with terminal
// escapes (testdata/h200-vm); the near NICs read from a DGX H100's matrix
// are the same with them as without.
func TestNearNICsThroughTerminalEscapes(t *testing.T) {
	plain, err := os.ReadFile("testdata/dgx-h100/topo-m.txt")
	if err != nil {
		t.Fatal(err)
	}
	header, rest, _ := bytes.Cut(plain, []byte("\n"))
	header = bytes.TrimPrefix(header, []byte("\t"))
	underlined := append([]byte("\t\x1b[4m"), header...)
	underlined = append(append(underlined, "\x1b[0m\n"...), rest...)
	want := parseNearNICs(plain, 8)
	if len(want) != 8 || len(want[0]) == 0 {
		t.Fatalf("the plain matrix gives no near NICs: %v", want)
	}
	if got := parseNearNICs(underlined, 8); !reflect.DeepEqual(got, want) {
		t.Errorf("with the header underlined: %v, want %v", got, want)
	}
}
