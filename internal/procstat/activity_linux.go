package procstat

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// readsTerminal reads /proc/<pid>/syscall ("0 0x0 …": the number of the
// system call the process sleeps in, then its arguments; "running" when
// it runs): a read or readv of a descriptor that is a tty.
func (procfs) readsTerminal(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/syscall")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return false
	}
	nr, err1 := strconv.Atoi(f[0])
	fd, err2 := strconv.ParseInt(strings.TrimPrefix(f[1], "0x"), 16, 64)
	if err1 != nil || err2 != nil || (nr != unix.SYS_READ && nr != unix.SYS_READV) {
		return false
	}
	target, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/fd/" + strconv.FormatInt(fd, 10))
	return err == nil && (strings.HasPrefix(target, "/dev/pts/") || strings.HasPrefix(target, "/dev/tty") || target == "/dev/console")
}

// listening matches the processes' socket inodes (/proc/<pid>/fd links
// "socket:[N]") with the listening sockets of their network namespaces
// (/proc/<pid>/net/tcp and tcp6, read once per namespace).
func (procfs) listening(pids []int) []int {
	inodes := map[string]bool{}
	nets := map[string]int{} // namespace -> a pid in it
	for _, pid := range pids {
		dir := "/proc/" + strconv.Itoa(pid)
		entries, err := os.ReadDir(dir + "/fd")
		if err != nil {
			continue
		}
		found := false
		for _, e := range entries {
			l, err := os.Readlink(dir + "/fd/" + e.Name())
			if err == nil && strings.HasPrefix(l, "socket:[") {
				inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
				found = true
			}
		}
		if !found {
			continue
		}
		ns, err := os.Readlink(dir + "/ns/net")
		if err != nil {
			ns = dir
		}
		if _, ok := nets[ns]; !ok {
			nets[ns] = pid
		}
	}
	var ports []int
	for _, pid := range nets {
		for _, name := range []string{"tcp", "tcp6"} {
			b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/net/" + name)
			if err != nil {
				continue
			}
			ports = append(ports, listeningIn(b, inodes)...)
		}
	}
	return ports
}

// listeningIn returns the ports of the LISTEN sockets (st 0A) of a
// /proc/net/tcp table whose inode (the 10th field) is in inodes.
func listeningIn(table []byte, inodes map[string]bool) []int {
	var ports []int
	sc := bufio.NewScanner(bytes.NewReader(table))
	sc.Scan() // the header
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[3] != "0A" || !inodes[f[9]] {
			continue
		}
		_, hexPort, ok := strings.Cut(f[1], ":")
		if p, err := strconv.ParseUint(hexPort, 16, 16); ok && err == nil {
			ports = append(ports, int(p))
		}
	}
	return ports
}
