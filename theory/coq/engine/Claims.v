(* The statements of Statements.v's specification theorems as propositions
   (definitions only, no proofs): a refutation of a mutant of Model.v imports
   Model, Spec and Claims and shows one of these false on a concrete run.
   Statements.v proves each for the model and checks that its theorem has
   exactly this type. *)

From Coq Require Import List Arith Bool ZArith.
Import ListNotations.
From VistaLabEngine Require Import Model Spec.

Definition claim_fidelity : Prop :=
  forall (c : config) (d : nat) (s0 : state) (ops : list op),
  init c d = Some s0 ->
  let s := run s0 ops in
  render s = sp_render s /\
  (sp_candidate_tokens s <= budget c ->
     forall b, In b (sp_blocks s) -> sp_shown_in_prompt (b_status b) = true ->
     exists m, In m (render s) /\ m_pos m = PB (b_id b) /\ m_show m = SData (b_data b)).

Definition claim_budget : Prop :=
  forall (c : config) (d : nat) (s0 : state) (ops : list op),
  init c d = Some s0 ->
  let s := run s0 ops in
  fixed c + pinned_cost s + mgmt c + tail_need s <= budget c /\ tokens s <= budget c /\
  tokens s = sp_tokens s.

Definition claim_ledger : Prop :=
  forall (c : config) (d : nat) (s0 : state) (ops : list op),
  init c d = Some s0 ->
  let s := run s0 ops in
  ledger s = sp_ledger s /\
  overhead s = sp_overhead s /\ conversation s = sp_conversation s /\
  total s = sp_overhead s + sp_conversation s + dash s /\
  (mode_of s = Normal <-> sp_overhead s + sp_conversation s + dash s <= budget c).

Definition claim_guard : Prop :=
  forall (c : config) (d : nat) (s0 : state) (ops : list op)
         (cid data : nat) (cc p : nat * nat) (t notice : nat) (nc : nat * nat) (ds : list nat),
  init c d = Some s0 ->
  let s := run s0 ops in
  let o := OResult cid data cc p t notice nc ds in
  let s' := fst (step s o) in
  let r := snd (step s o) in
  r_ok r = None ->
  (exists b, sp_block s' (S (nblocks s)) = Some b /\ b_kind b = KResult /\ b_status b = Visible /\
     match r_guard r with
     | GAdmit => b_data b = data /\ b_rej b = false
     | _ => b_data b = notice /\ b_rej b = true
     end) /\
  (r_guard r = GRejectCap <->
     budget c < fst cc + fixed c + sp_pinned_cost s + sp_call_cost s + dfloor c) /\
  (r_guard r = GAdmit -> exists k, sp_content s' + sp_dash_at ds k <= hard c) /\
  (forall dd, ds = [dd] -> r_guard r <> GRejectCap ->
     match sp_cover (sp_guard_order s cid data cc p t)
             (Z.of_nat (sp_content s + fst cc + dd - sp_pend_cost (pending s) cid)
              - Z.of_nat (hard c))%Z with
     | Some plan => (r_guard r = GAdmit \/ r_guard r = GRejectPending) /\ r_offloaded r = plan
     | None => r_guard r = GRejectHard /\ r_offloaded r = []
     end).

(* Deletion, as Statements.v proves it: every deleted unit's store key
   holds nothing, and a deleted block is a tombstone that recover refuses,
   after the delete and after any later operations. *)
Definition claim_deletion : Prop :=
  forall (c : config) (d : nat) (s0 : state) (ops : list op) (us : list uid) (dm : nat)
         (later : list op),
  init c d = Some s0 ->
  let s := run s0 ops in
  r_ok (snd (step s (ODelete us dm))) = None ->
  let s' := run (fst (step s (ODelete us dm))) later in
  forall u, In u us ->
  sp_lookup (sp_key_of u) (store s') = None /\
  (forall n, u = UB n -> sp_deleted s' n = true /\ recover s' n = None).

(* Deletion in full (stated, not yet proved): also every leaf of a deleted
   group is a tombstone nothing recovers, and no store entry holds a deleted
   leaf's bytes (raw, or inlined in a group payload). *)
Definition claim_deletion_leaves : Prop :=
  forall (c : config) (d : nat) (s0 : state) (ops : list op) (us : list uid) (dm : nat)
         (later : list op),
  init c d = Some s0 ->
  let s := run s0 ops in
  r_ok (snd (step s (ODelete us dm))) = None ->
  let s' := run (fst (step s (ODelete us dm))) later in
  forall u, In u us ->
  sp_lookup (sp_key_of u) (store s') = None /\
  forall n, In n (sp_leaves s u) ->
    sp_deleted s' n = true /\ recover s' n = None /\
    forall kv, In kv (store s') -> sp_holds n kv = false.

Definition claim_archive_contract : Prop :=
  forall (c : config) (d : nat) (s0 : state) (ops : list op),
  init c d = Some s0 ->
  let s := run s0 ops in
  forall m u, In m (render s) -> sp_handle_unit (m_form m) (m_pos m) = Some u ->
  m_show m = SHandle (sp_key_of u) (sp_level s u) (sp_payload s (sp_key_of u)) /\
  sp_lookup (sp_key_of u) (store s) <> None /\
  sp_read_path s (sp_key_of u) = Some (sp_unit_payload s u).
