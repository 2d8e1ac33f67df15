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
 */

// The files in compress package are forked from fasthttp[github.com/valyala/fasthttp],
// and we keep the original Copyright[Copyright 2015 fasthttp authors] and License of fasthttp for those files.
// We also need to modify as we need, the modifications are Copyright of 2022 CloudWeGo Authors.
// Thanks for fasthttp authors! Below is the source code information:
// 		Repo: github.com/valyala/fasthttp
//		Forked Version: v1.36.0

package compress
