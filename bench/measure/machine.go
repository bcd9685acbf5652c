package measure

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strings"
)

// Machine describes where a run ran, for reports.
type Machine struct {
	CPU        string `json:"cpu"`        // the processor's model name, where the system tells it
	Cores      int    `json:"cores"`      // logical CPUs usable by the process
	GOMAXPROCS int    `json:"gomaxprocs"` // Ps the Go scheduler runs
	Go         string `json:"go"`         // the Go version that built the program
	OS         string `json:"os"`
	Arch       string `json:"arch"`
}

// ThisMachine describes the machine the program runs on.
func ThisMachine() Machine {
	return Machine{CPU: cpuModel(), Cores: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0),
		Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
}

// String returns one line: "AMD EPYC, 2 cores, GOMAXPROCS 2, go1.26.8 linux/amd64".
func (m Machine) String() string {
	return fmt.Sprintf("%s, %d cores, GOMAXPROCS %d, %s %s/%s", m.CPU, m.Cores, m.GOMAXPROCS, m.Go, m.OS, m.Arch)
}

// cpuModel reads the model name from /proc/cpuinfo (Linux); elsewhere it
// says "unknown CPU".
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}
