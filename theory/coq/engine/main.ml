(* The engine model's executable: reads operations (one per line on stdin)
   and prints one observation per operation (FORMAT.md in this folder).
   All decisions are made by the extracted Coq model (model.ml); this file
   only parses, interns the opaque tokens and prints. *)

open Model

exception Bad of string

(* Opaque tokens (payload bytes, call ids) <-> naturals. *)
let ids : (string, int) Hashtbl.t = Hashtbl.create 1024
let names : (int, string) Hashtbl.t = Hashtbl.create 1024
let safe s =
  s <> "" && String.for_all (fun c ->
    (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
    || c = '_' || c = '.' || c = '-') s
let intern s =
  if not (safe s) then raise (Bad ("token:" ^ String.escaped s));
  match Hashtbl.find_opt ids s with
  | Some n -> n
  | None ->
      let n = Hashtbl.length ids + 1 in
      Hashtbl.add ids s n; Hashtbl.add names n s; n
let name n = match Hashtbl.find_opt names n with Some s -> s | None -> "?" ^ string_of_int n

let nat s =
  match int_of_string_opt s with
  | Some n when n >= 0 && String.for_all (fun c -> c >= '0' && c <= '9') s -> n
  | _ -> raise (Bad ("number:" ^ String.escaped s))
let list s = if s = "" || s = "-" then [] else String.split_on_char ',' s
let pair s =
  match String.split_on_char '/' s with
  | [a] -> let n = nat a in (n, n)
  | [a; b] -> (nat a, nat b)
  | _ -> raise (Bad ("pair:" ^ String.escaped s))
let unit_of s =
  let n = String.length s in
  if n >= 2 && s.[0] = 'B' then UB (nat (String.sub s 1 (n - 1)))
  else if n >= 2 && s.[0] = 'G' then UG (nat (String.sub s 1 (n - 1)))
  else raise (Bad ("unit:" ^ String.escaped s))
let block_of s = match unit_of s with UB n -> n | UG _ -> raise (Bad ("block:" ^ s))
let stub s =
  match String.split_on_char ':' s with
  | [b; c] -> (block_of b, nat c)
  | _ -> raise (Bad ("stub:" ^ String.escaped s))

let parse_kv allowed toks =
  let tbl = Hashtbl.create 8 in
  List.iter (fun t ->
    match String.index_opt t '=' with
    | None -> raise (Bad ("field:" ^ String.escaped t))
    | Some i ->
        let k = String.sub t 0 i and v = String.sub t (i + 1) (String.length t - i - 1) in
        if not (List.mem k allowed) then raise (Bad ("key:" ^ String.escaped k));
        if Hashtbl.mem tbl k then raise (Bad ("duplicate:" ^ k));
        Hashtbl.add tbl k v) toks;
  let get k = match Hashtbl.find_opt tbl k with
    | Some v -> v | None -> raise (Bad ("missing:" ^ k)) in
  let opt k d = match Hashtbl.find_opt tbl k with Some v -> v | None -> d in
  (get, opt)

let parse_op name toks =
  let plain k =
    let get, _ = parse_kv ["pin"; "data"; "c"; "dash"] toks in
    let pin = match get "pin" with "0" -> false | "1" -> true | v -> raise (Bad ("pin:" ^ v)) in
    OPlain (k, pin, intern (get "data"), nat (get "c"), nat (get "dash")) in
  let units allowed f =
    let get, opt = parse_kv allowed toks in
    f get opt (List.map unit_of (list (get "units"))) in
  match name with
  | "system" -> plain KSystem
  | "user" -> plain KUser
  | "assistant" -> plain KAssistant
  | "call" ->
      let get, _ = parse_kv ["ids"; "data"; "c"; "pend"; "dash"] toks in
      OCall (List.map intern (list (get "ids")), intern (get "data"), nat (get "c"),
             List.map nat (list (get "pend")), nat (get "dash"))
  | "result" ->
      let get, _ = parse_kv ["id"; "data"; "c"; "p"; "t"; "notice"; "n"; "dash"] toks in
      let ds = List.map nat (list (get "dash")) in
      if ds = [] then raise (Bad "missing:dash");
      OResult (intern (get "id"), intern (get "data"), pair (get "c"), pair (get "p"),
               nat (get "t"), intern (get "notice"), pair (get "n"), ds)
  | "archive" ->
      units ["units"; "h"; "stubs"; "dash"] (fun get opt us ->
        OArchive (us, pair (get "h"), List.map stub (list (opt "stubs" "")), nat (get "dash")))
  | "restore" -> units ["units"; "dash"] (fun get _ us -> ORestore (us, nat (get "dash")))
  | "delete" -> units ["units"; "dash"] (fun get _ us -> ODelete (us, nat (get "dash")))
  | "recover" ->
      let get, _ = parse_kv ["unit"] toks in ORecover (block_of (get "unit"))
  | _ -> raise (Bad ("operation:" ^ String.escaped name))

(* ---- printing ---- *)
let uid_s = function UB n -> "B" ^ string_of_int n | UG n -> "G" ^ string_of_int n
let key_s = function KB n -> "B" ^ string_of_int n ^ ".txt" | KG n -> "G" ^ string_of_int n ^ ".txt"
let key_rank = function KB n -> (0, n) | KG n -> (1, n)
let csv f = function [] -> "-" | l -> String.concat "," (List.map f l)
let reason_s = function
  | RPending -> "pending" | RFloor -> "floor" | RDuplicate -> "duplicate_id"
  | RNotPending -> "not_pending" | RUnknown -> "unknown" | RDeleted -> "deleted"
  | RInGroup -> "in_group" | RPinned -> "pinned" | RHasPending -> "has_pending"
  | RNotArchived -> "not_archived" | REmpty -> "empty"
let status_s = function
  | Visible -> "visible" | Pinned -> "pinned" | Archived -> "archived"
  | Offloaded -> "offloaded" | Deleted -> "deleted"
let guard_s = function
  | GNone -> "-" | GAdmit -> "admit" | GRejectCap -> "reject:cap" | GRejectHard -> "reject:hard_limit"
  | GRejectPending -> "reject:pending"
let role_s = function
  | RSystem -> "system" | RUser -> "user" | RAssistant -> "assistant"
  | RCalls _ -> "calls" | RTool _ -> "tool"
let form_s = function
  | FContent -> "content" | FNotice -> "notice" | FPlaceholder -> "placeholder"
  | FHandle u -> "handle." ^ uid_s u | FStub u -> "stub." ^ uid_s u
  | FTombstone -> "tombstone" | FPending -> "pending" | FDashboard -> "dashboard"
let pos_s = function
  | PB n -> "B" ^ string_of_int n | PPending c -> "pending." ^ name c | PDash -> "dash"
let msg_s m = pos_s m.m_pos ^ "/" ^ form_s m.m_form ^ "/" ^ role_s m.m_role
let entry_s = function
  | EIn (u, d) -> uid_s u ^ "=" ^ name d
  | ERef (u, k) -> uid_s u ^ ">" ^ key_s k
let value_s = function
  | VRaw d -> name d
  | VGrp es -> "[" ^ String.concat ";" (List.map entry_s es) ^ "]"
(* The wire view of a rendering: roles with their call ids (ids as the model
   numbers them, c<n>), and the Anthropic turns of anthropic_wire (the tool ids
   of the k-th assistant turn as c<n>_<k>). *)
let cid_s c = "c" ^ string_of_int c
let ids_s l = match l with [] -> "-" | _ -> String.concat ";" (List.map cid_s l)
let wire_s m = match m.m_role with
  | RCalls l -> "calls:" ^ ids_s l
  | RTool c -> "tool:" ^ cid_s c
  | r -> role_s r
let wid_s (c, k) = cid_s c ^ "_" ^ string_of_int k
let wids_s l = match l with [] -> "-" | _ -> String.concat ";" (List.map wid_s l)
let turn_s t =
  (if t.w_user then "user" else "assistant") ^ ":" ^ wids_s t.w_results ^ ":"
  ^ wids_s t.w_uses ^ ":" ^ string_of_int t.w_text
let type_s = function
  | TSystem -> "system" | TUser -> "user" | TAssistant -> "assistant"
  | TCall -> "tool_call" | TResult -> "tool_result" | TGroup -> "group"
let lrow_s r =
  String.concat ":" [uid_s r.r_uid; string_of_int r.r_tok; string_of_int r.r_age; type_s r.r_type;
                     string_of_int r.r_level;
                     (match r.r_parent with Some n -> "B" ^ string_of_int n | None -> "-");
                     status_s r.r_status]
let shows_s m = match m.m_show with
  | SNone -> "-"
  | SData d -> "d:" ^ name d
  | SHandle (k, lvl, v) -> "h:" ^ key_s k ^ ":" ^ string_of_int lvl ^ ":" ^ value_s v
  | SStub k -> "s:" ^ key_s k
let row_s (((u, st), lvl), tok) =
  uid_s u ^ ":" ^ status_s st ^ ":" ^ string_of_int lvl ^ ":" ^ string_of_int tok

let observe status s (r : result option) =
  let i = string_of_int in
  match s with
  | None ->
      Printf.printf "status=%s mode=- tokens=- total=- overhead=- conversation=- dashboard=- \
                     guard=- offloaded=- recovered=- units=- render=- store=- request=- turns=- \
                     ledger=- shows=- cache_prefix=- mdash=-\n" status
  | Some s ->
      let guard, off, rec_ = match r with
        | Some r -> guard_s r.r_guard, csv (fun n -> "B" ^ i n) r.r_offloaded,
                    (match r.r_recovered with Some d -> name d | None -> "-")
        | None -> "-", "-", "-" in
      let st = List.sort (fun (a, _) (b, _) -> compare (key_rank a) (key_rank b)) s.store in
      let rd = render s in  (* once: the fields below all read the same rendering *)
      Printf.printf "status=%s mode=%s tokens=%d total=%d overhead=%d conversation=%d \
                     dashboard=%d guard=%s offloaded=%s recovered=%s units=%s render=%s store=%s \
                     request=%s turns=%s ledger=%s shows=%s cache_prefix=%d mdash=%d\n"
        status (match mode_of s with Normal -> "normal" | Management -> "management")
        (tokens s) (total s) (overhead s) (conversation s) s.dash guard off rec_
        (csv row_s (unit_rows s)) (csv msg_s rd)
        (csv (fun (k, v) -> key_s k ^ ":" ^ value_s v) st)
        (csv wire_s rd)
        (csv turn_s (anthropic_wire (List.map (fun m -> m.m_role) rd)))
        (csv lrow_s (ledger s)) (csv shows_s rd)
        (if s.cfg.cache_prefix then 1 else 0) (min s.mdash s.cfg.mgmt)

(* The optional management dashboard cost (FORMAT.md, [mdash]): checked
   against the bound, then applied with the model's OMdash operation once the
   line's own operation is done (a refused operation changes nothing). *)
let split_mdash toks =
  List.partition (fun t -> String.length t >= 6 && String.sub t 0 6 = "mdash=") toks
let check_mdash mgmt = function
  | [] -> None
  | [t] ->
      let v = nat (String.sub t 6 (String.length t - 6)) in
      if v > mgmt then raise (Bad "mdash") else Some v
  | _ -> raise (Bad "duplicate:mdash")
let with_md s = function None -> s | Some m -> fst (step s (OMdash m))

let () =
  let state = ref None and started = ref false in
  (try
    while true do
      let line = input_line stdin in
      let toks = List.filter (fun t -> t <> "")
          (String.split_on_char ' ' (String.map (fun c -> if c = '\t' || c = '\r' then ' ' else c) line)) in
      (match toks with
       | [] -> ()
       | t :: _ when String.length t > 0 && t.[0] = '#' -> ()
       | "init" :: rest ->
           (try
              if !started then raise (Bad "init_twice");
              let md, rest = split_mdash rest in
              let get, opt = parse_kv ["budget"; "hard"; "fixed"; "mgmt"; "dfloor"; "dash";
                                       "cache_prefix"; "keep_pending"; "nres"] rest in
              let flag k = (match opt k "0" with
               | "0" -> false | "1" -> true
               | v -> raise (Bad (k ^ ":" ^ String.escaped v))) in
              let cp = flag "cache_prefix" in
              let kp = flag "keep_pending" in
              let c = { budget = nat (get "budget"); hard = nat (get "hard");
                        fixed = nat (get "fixed"); mgmt = nat (get "mgmt");
                        dfloor = nat (get "dfloor"); cache_prefix = cp;
                        keep_pending = kp; nres = nat (opt "nres" "0") } in
              let m = check_mdash c.mgmt md in
              let d = nat (get "dash") in
              started := true;
              (match init c d with
               | Some s -> state := Some (with_md s m); observe "ok" !state None
               | None -> observe "refused:floor" None None)
            with Bad w -> observe ("error:" ^ w) !state None)
       | op :: rest ->
           (try
              let md, rest = split_mdash rest in
              if op = "recover" && md <> [] then raise (Bad "key:mdash");
              let o = parse_op op rest in
              let m = (match !state with Some s -> check_mdash s.cfg.mgmt md | None -> None) in
              match !state with
              | None -> observe (if !started then "refused:no_workspace" else "error:no_init") None None
              | Some s ->
                  let s', r = step s o in
                  state := Some (if r.r_ok = None then with_md s' m else s');
                  observe (match r.r_ok with None -> "ok" | Some e -> "refused:" ^ reason_s e)
                    !state (Some r)
            with Bad w -> observe ("error:" ^ w) !state None));
      flush stdout
    done
  with End_of_file -> ());
  flush stdout
