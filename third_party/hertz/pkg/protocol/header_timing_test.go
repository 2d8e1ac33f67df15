/*
 * Copyright 2022 CloudWeGo Authors
 *
 * Licensed under the Apache License, Version 2.0 (the "License");
 * you may not use this file except in compliance with the License.
 * You may obtain a copy of the License at
 *
 *     http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 *
 * The MIT License (MIT)
 *
 * Copyright (c) 2015-present Aliaksandr Valialkin, VertaMedia, Kirill Danshin, Erik Dubbelboer, FastHTTP Authors
 *
 * Permission is hereby granted, free of charge, to any person obtaining a copy
 * of this software and associated documentation files (the "Software"), to deal
 * in the Software without restriction, including without limitation the rights
 * to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
 * copies of the Software, and to permit persons to whom the Software is
 * furnished to do so, subject to the following conditions:
 *
 * The above copyright notice and this permission notice shall be included in
 * all copies or substantial portions of the Software.
 *
 * THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
 * IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
 * FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
 * AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
 * LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
 * OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN
 * THE SOFTWARE.
 *
 * This file may have been modified by CloudWeGo authors. All CloudWeGo
 * Modifications are Copyright 2022 CloudWeGo Authors.
 */

package protocol

import (
	"net/http"
	"strconv"
	"testing"
)

func BenchmarkHTTPHeaderGet(b *testing.B) {
	hh := make(http.Header)
	hh.Set("X-tt-logid", "abc123456789")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		hh.Get("X-tt-logid")
	}
}

func BenchmarkHertzHeaderGet(b *testing.B) {
	zh := new(ResponseHeader)
	zh.Set("X-tt-logid", "abc123456789")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		zh.Get("X-tt-logid")
	}
}

func BenchmarkHTTPHeaderSet(b *testing.B) {
	hh := make(http.Header)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		hh.Set("X-tt-logid", "abc123456789")
	}
}

func BenchmarkHertzHeaderSet(b *testing.B) {
	zh := new(ResponseHeader)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		zh.Set("X-tt-logid", "abc123456789")
	}
}

func BenchmarkHTTPHeaderAdd(b *testing.B) {
	hh := make(http.Header)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		hh.Add("X-tt-"+strconv.Itoa(i), "abc123456789")
	}
}

func BenchmarkHertzHeaderAdd(b *testing.B) {
	zh := new(ResponseHeader)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		zh.Add("X-tt-"+strconv.Itoa(i), "abc123456789")
	}
}

func BenchmarkRefreshServerDate(b *testing.B) {
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		refreshServerDate()
	}
}

func BenchmarkHeaderAppendBytes(b *testing.B) {
	h := new(ResponseHeader)
	h.Set("X-tt-logid", "abc123456789")
	h.SetServerBytes([]byte("hertz"))

	buf := make([]byte, 0, 1024)

	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = h.AppendBytes(buf)
	}
}
