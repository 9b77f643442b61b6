package procstat

import "sort"

// ReadsTerminal reports whether process pid is blocked reading a
// terminal device: it waits for someone to type (Linux: the system call
// it sleeps in, /proc/<pid>/syscall, is a read of a tty's descriptor;
// macOS: its wait channel is "ttyin"). A process that polls a terminal
// along with other descriptors (an event loop) is not seen.
func ReadsTerminal(pid int) bool { return processes.readsTerminal(pid) }

// ListeningPorts returns the TCP ports (IPv4 and IPv6) that the processes
// pids listen on, sorted, each once (Linux: the sockets of
// /proc/<pid>/fd matched to /proc/<pid>/net/tcp{,6}; macOS: lsof, when
// it is installed). None when they listen on nothing or cannot be read.
func ListeningPorts(pids []int) []int {
	if len(pids) == 0 {
		return nil
	}
	seen := map[int]bool{}
	var ports []int
	for _, p := range processes.listening(pids) {
		if p > 0 && !seen[p] {
			seen[p] = true
			ports = append(ports, p)
		}
	}
	sort.Ints(ports)
	return ports
}
