package server

import "syscall"

// peerOf reads the peer of the Unix socket fd with SO_PEERCRED.
func peerOf(fd int) (peer, error) {
	cred, err := syscall.GetsockoptUcred(fd, syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	if err != nil {
		return peer{}, err
	}
	return peer{uid: int(cred.Uid), pid: int(cred.Pid)}, nil
}
