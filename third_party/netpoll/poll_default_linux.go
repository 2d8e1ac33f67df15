// Copyright 2022 CloudWeGo Authors
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//    http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package netpoll

import (
	"errors"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"
)

func openPoll() (Poll, error) {
	return openDefaultPoll()
}

func openDefaultPoll() (*defaultPoll, error) {
	poll := new(defaultPoll)

	poll.buf = make([]byte, 8)
	p, err := EpollCreate(0)
	if err != nil {
		return nil, err
	}
	poll.fd = p

	r0, _, e0 := syscall.Syscall(syscall.SYS_EVENTFD2, 0, 0, 0)
	if e0 != 0 {
		_ = syscall.Close(poll.fd)
		return nil, e0
	}

	poll.Reset = poll.reset
	poll.Handler = poll.handler
	poll.wop = &FDOperator{FD: int(r0)}

	if err = poll.Control(poll.wop, PollReadable); err != nil {
		_ = syscall.Close(poll.wop.FD)
		_ = syscall.Close(poll.fd)
		return nil, err
	}

	poll.opcache = newOperatorCache()
	return poll, nil
}

type defaultPoll struct {
	pollArgs
	fd      int            // epoll fd
	wop     *FDOperator    // eventfd, wake epoll_wait
	buf     []byte         // read wfd trigger msg
	trigger uint32         // trigger flag
	m       sync.Map       //nolint:unused // only used in go:race
	opcache *operatorCache // operator cache
	// fns for handle events
	Reset   func(size, caps int)
	Handler func(events []epollevent) (closed bool)
}

type pollArgs struct {
	size     int
	caps     int
	events   []epollevent
	barriers []barrier
	hups     []func(p Poll) error
}

func (a *pollArgs) reset(size, caps int) {
	a.size, a.caps = size, caps
	a.events, a.barriers = make([]epollevent, size), make([]barrier, size)
	for i := range a.barriers {
		a.barriers[i].bs = make([][]byte, a.caps)
		a.barriers[i].ivs = make([]syscall.Iovec, a.caps)
	}
}

// Wait implements Poll.
//
// sluice's patch (see third_party/README.md): the poller does not block its
// thread in epoll_wait. Upstream waits with epoll_wait(-1), a blocking
// system call that holds the Go scheduler's P; with GOMAXPROCS=1 the
// runtime's monitor (sysmon) takes the P away from it on every wait and
// polls every 20 µs, and the next wake-up runs on another thread. Here the
// epoll descriptor is registered with the Go runtime's own poller (an
// epoll descriptor is readable while it has events), and an idle poller
// parks its goroutine until the runtime sees it readable, so the thread
// that served the last event waits for the next one in the runtime's
// netpoll, holding nothing.
func (p *defaultPoll) Wait() (err error) {
	// init
	caps, n := barriercap, 0
	p.Reset(128, caps)
	idle := p.idleWaiter()
	defer idle.close()
	// wait
	for {
		if n == p.size && p.size < 128*1024 {
			p.Reset(p.size<<1, caps)
		}
		n, err = idle.next()
		if err != nil && err != syscall.EINTR {
			return err
		}
		if n <= 0 {
			continue
		}
		if p.Handler(p.events[:n]) {
			return nil
		}
		// we can make sure that there is no op remaining if Handler finished
		p.opcache.free()
	}
}

// idleWaiter is how an idle poller waits for its next events: parked on
// the Go runtime's poller when the epoll descriptor could be registered
// there, else in a blocking epoll_wait as upstream does.
type idleWaiter struct {
	p    *defaultPoll
	file *os.File        // a duplicate of the epoll descriptor, runtime-polled
	conn syscall.RawConn // file's, to wait on
	// check is RawConn.Read's function, made once: a closure made per call
	// would escape to the heap on every wake-up. It leaves its result in n
	// and err.
	check func(uintptr) bool
	n     int
	err   error
}

func (p *defaultPoll) idleWaiter() *idleWaiter {
	w := &idleWaiter{p: p}
	w.check = func(uintptr) bool {
		w.n, w.err = EpollWait(w.p.fd, w.p.events, 0)
		return w.n > 0 || w.err != nil // EINTR too: the caller looks again
	}
	fd, err := syscall.Dup(p.fd)
	if err != nil {
		return w
	}
	syscall.CloseOnExec(fd)
	// O_NONBLOCK makes os.NewFile register the descriptor with the runtime's
	// poller; epoll_wait itself ignores the flag (its timeout decides).
	if err = syscall.SetNonblock(fd, true); err != nil {
		_ = syscall.Close(fd)
		return w
	}
	f := os.NewFile(uintptr(fd), "netpoll-epoll")
	conn, err := f.SyscallConn()
	if err != nil {
		_ = f.Close()
		return w
	}
	w.file, w.conn = f, conn
	return w
}

// next returns the poller's next events: those ready now, or else the
// first to come.
func (w *idleWaiter) next() (n int, err error) {
	p := w.p
	if w.conn == nil { // upstream's loop: look, yield, block
		if n, err = EpollWait(p.fd, p.events, 0); n != 0 || err != nil {
			return n, err
		}
		runtime.Gosched()
		return EpollWait(p.fd, p.events, -1)
	}
	// Under load more events are about to come: let the goroutines the last
	// ones readied run first (upstream yields here too, before its blocking
	// wait), so that a busy poller finds new events when it looks and
	// rarely parks, which would cost a wake-up through the runtime's poller.
	runtime.Gosched()
	// RawConn.Read first clears the descriptor's readiness, then calls the
	// function, and parks only when it returns false, until the runtime's
	// poller reports the descriptor readable. The check must come after
	// the clearing, or an event between the two is lost: so the one
	// non-blocking epoll_wait per wake-up is made here, inside Read.
	if rerr := w.conn.Read(w.check); rerr != nil { // the duplicate was closed: wait as upstream does
		return EpollWait(p.fd, p.events, -1)
	}
	return w.n, w.err
}

func (w *idleWaiter) close() {
	if w.file != nil {
		_ = w.file.Close()
	}
}

func (p *defaultPoll) handler(events []epollevent) (closed bool) {
	var triggerRead, triggerWrite, triggerHup, triggerError bool
	var err error
	for i := range events {
		operator := p.getOperator(0, unsafe.Pointer(&events[i].data))
		if operator == nil || !operator.do() {
			continue
		}

		var totalRead int
		evt := events[i].events
		triggerRead = evt&syscall.EPOLLIN != 0
		triggerWrite = evt&syscall.EPOLLOUT != 0
		triggerHup = evt&(syscall.EPOLLHUP|syscall.EPOLLRDHUP) != 0
		triggerError = evt&syscall.EPOLLERR != 0

		// trigger or exit gracefully
		if operator.FD == p.wop.FD {
			// must clean trigger first
			syscall.Read(p.wop.FD, p.buf)
			atomic.StoreUint32(&p.trigger, 0)
			// if closed & exit
			if p.buf[0] > 0 {
				syscall.Close(p.wop.FD)
				syscall.Close(p.fd)
				operator.done()
				return true
			}
			operator.done()
			continue
		}

		if triggerRead {
			if operator.OnRead != nil {
				// for non-connection
				operator.OnRead(p)
			} else if operator.Inputs != nil {
				// for connection
				bs := operator.Inputs(p.barriers[i].bs)
				if len(bs) > 0 {
					n, err := ioread(operator.FD, bs, p.barriers[i].ivs)
					operator.InputAck(n)
					totalRead += n
					if err != nil {
						p.appendHup(operator)
						continue
					}
				}
			} else {
				logger.Printf("NETPOLL: operator has critical problem! event=%d operator=%v", evt, operator)
			}
		}
		if triggerHup {
			if triggerRead && operator.Inputs != nil {
				// read all left data if peer send and close
				var leftRead int
				// read all left data if peer send and close
				if leftRead, err = readall(operator, p.barriers[i]); err != nil && !errors.Is(err, ErrEOF) {
					logger.Printf("NETPOLL: readall(fd=%d)=%d before close: %s", operator.FD, total, err.Error())
				}
				totalRead += leftRead
			}
			// only close connection if no further read bytes
			if totalRead == 0 {
				p.appendHup(operator)
				continue
			}
		}
		if triggerError {
			// Under block-zerocopy, the kernel may give an error callback, which is not a real error, just an EAGAIN.
			// So here we need to check this error, if it is EAGAIN then do nothing, otherwise still mark as hup.
			if _, _, _, _, err := syscall.Recvmsg(operator.FD, nil, nil, syscall.MSG_ERRQUEUE); err != syscall.EAGAIN {
				p.appendHup(operator)
			} else {
				operator.done()
			}
			continue
		}
		if triggerWrite {
			if operator.OnWrite != nil {
				// for non-connection
				operator.OnWrite(p)
			} else if operator.Outputs != nil {
				// for connection
				bs, _ := operator.Outputs(p.barriers[i].bs)
				if len(bs) > 0 {
					n, err := iosend(operator.FD, bs, p.barriers[i].ivs, false)
					operator.OutputAck(n)
					if err != nil {
						p.appendHup(operator)
						continue
					}
				}
			} else {
				logger.Printf("NETPOLL: operator has critical problem! event=%d operator=%v", evt, operator)
			}
		}
		operator.done()
	}
	// hup conns together to avoid blocking the poll.
	p.onhups()
	return false
}

// Close will write 10000000
func (p *defaultPoll) Close() error {
	_, err := syscall.Write(p.wop.FD, []byte{1, 0, 0, 0, 0, 0, 0, 0})
	return err
}

// Trigger implements Poll.
func (p *defaultPoll) Trigger() error {
	if atomic.AddUint32(&p.trigger, 1) > 1 {
		return nil
	}
	// MAX(eventfd) = 0xfffffffffffffffe
	_, err := syscall.Write(p.wop.FD, []byte{0, 0, 0, 0, 0, 0, 0, 1})
	return err
}

// Control implements Poll.
func (p *defaultPoll) Control(operator *FDOperator, event PollEvent) error {
	// DON'T move `fd=operator.FD` behind inuse() call, we can only access operator before op.inuse() for avoid race
	// G1:              G2:
	// op.inuse()       op.unused()
	// op.FD  -- T1     op.FD = 0  -- T2
	// T1 and T2 may happen together
	fd := operator.FD
	var op int
	var evt epollevent
	p.setOperator(unsafe.Pointer(&evt.data), operator)
	switch event {
	case PollReadable: // server accept a new connection and wait read
		operator.inuse()
		op, evt.events = syscall.EPOLL_CTL_ADD, syscall.EPOLLIN|syscall.EPOLLRDHUP|syscall.EPOLLERR
	case PollWritable: // client create a new connection and wait connect finished
		operator.inuse()
		op, evt.events = syscall.EPOLL_CTL_ADD, EPOLLET|syscall.EPOLLOUT|syscall.EPOLLRDHUP|syscall.EPOLLERR
	case PollDetach: // deregister
		p.delOperator(operator)
		op, evt.events = syscall.EPOLL_CTL_DEL, syscall.EPOLLIN|syscall.EPOLLOUT|syscall.EPOLLRDHUP|syscall.EPOLLERR
	case PollR2RW: // connection wait read/write
		op, evt.events = syscall.EPOLL_CTL_MOD, syscall.EPOLLIN|syscall.EPOLLOUT|syscall.EPOLLRDHUP|syscall.EPOLLERR
	case PollRW2R: // connection wait read
		op, evt.events = syscall.EPOLL_CTL_MOD, syscall.EPOLLIN|syscall.EPOLLRDHUP|syscall.EPOLLERR
	}
	return EpollCtl(p.fd, op, fd, &evt)
}
