package server

import "golang.org/x/sys/unix"

// peerOf reads the peer of the Unix socket fd with LOCAL_PEERCRED (what
// getpeereid(3) reads) and LOCAL_PEERPID.
func peerOf(fd int) (peer, error) {
	cred, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	if err != nil {
		return peer{}, err
	}
	pid, _ := unix.GetsockoptInt(fd, unix.SOL_LOCAL, unix.LOCAL_PEERPID)
	return peer{uid: int(cred.Uid), pid: pid}, nil
}
