/*
 * Copyright 2025 CloudWeGo Authors
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
 */

package runner

import (
	"context"
	"sync"
	"testing"
)

func TestRunTask(t *testing.T) {
	var wg sync.WaitGroup
	wg.Add(2)
	ctx := context.Background()
	RunTask(ctx, func() {
		wg.Done()
	})
	UseGoRunTask()
	RunTask(ctx, func() {
		wg.Done()
	})
	wg.Wait()
}
