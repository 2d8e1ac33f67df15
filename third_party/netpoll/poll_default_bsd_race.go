// Copyright 2023 CloudWeGo Authors
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

//go:build (darwin || netbsd || freebsd || openbsd || dragonfly) && race
// +build darwin netbsd freebsd openbsd dragonfly
// +build race

package netpoll

import "unsafe"

func (p *defaultPoll) getOperator(fd int, ptr unsafe.Pointer) *FDOperator {
	tmp, _ := p.m.Load(fd)
	if tmp == nil {
		return nil
	}
	return tmp.(*FDOperator)
}

func (p *defaultPoll) setOperator(ptr unsafe.Pointer, operator *FDOperator) {
	p.m.Store(operator.FD, operator)
}

func (p *defaultPoll) delOperator(operator *FDOperator) {
	p.m.Delete(operator.FD)
}
