(* Theorem 1, part (E), for EVERY adaptive policy, repeats included.  The
   policy chooses each next block from (y, u, the overflow flags observed so
   far), with no premise: it may choose a block it has already archived.
   Archiving a block frees its net size (L = kappa ell for the bulky block J*,
   ell for a load-bearing one) the first time only; a repeat frees nothing and
   is a wasted step.  After each step the agent observes the flag
   "freed < L"; the run stops when it clears, or after a fuel of F >= kappa
   steps.  The cost Zrep counts the steps that archive a load-bearing block,
   repeats included (each is a step spent on a block that must later be made
   available again, or a wasted one).
   Reduction: before J* is archived every flag reads "over" (the distinct
   load-bearing blocks archived so far number < kappa), so the run follows
   the fixed sequence s_t = policy(y, u, t flags "over").  Remove its repeats
   (keep first occurrences) and append the blocks it never names: this is an
   injective (Y,U)-measurable archive order pi_rep(y, u), and pointwise
   Zrep >= min(tau - 1, kappa) for it (a repeat only delays J*, never brings
   it earlier).  Hence the bound of Theorem1.v holds for every policy, and a
   repeat never lowers E[Z]. *)

From Coq Require Import Reals Lra.
From mathcomp Require Import ssreflect ssrfun ssrbool eqtype ssrnat seq.
From mathcomp Require Import fintype finset bigop finfun.
From VistaLab Require Import Entropy ListFano Theorem1 Adaptive.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Local Open Scope R_scope.

(* ------------------------------------------------------------------ *)
(* Removing repeats, keeping first occurrences.                         *)
Section Dedup.
Variable T : eqType.

Fixpoint fdedup (l : seq T) : seq T :=
  if l is x :: l' then x :: [seq z <- fdedup l' | z != x] else [::].

Lemma mem_fdedup l z : (z \in fdedup l) = (z \in l).
Proof.
elim: l => [|x l IH] //=; rewrite !in_cons mem_filter IH.
by case: (z =P x).
Qed.

Lemma fdedup_uniq l : uniq (fdedup l).
Proof.
elim: l => [|x l IH] //=.
rewrite mem_filter /= eqxx /=.
by apply: filter_uniq.
Qed.

Lemma size_fdedup l : (size (fdedup l) <= size l)%N.
Proof.
elim: l => [|x l IH] //=; rewrite ltnS size_filter.
exact: leq_trans (count_size _ _) IH.
Qed.

Lemma fdedup_cat l1 l2 :
  fdedup (l1 ++ l2) = fdedup l1 ++ [seq z <- fdedup l2 | z \notin l1].
Proof.
elim: l1 => [|x l1 IH] /=.
  by rewrite (@eq_filter _ _ predT) ?filter_predT.
rewrite IH filter_cat -filter_predI; congr (_ :: _ ++ _).
by apply: eq_filter => z; rewrite /= in_cons negb_or.
Qed.

Lemma size_fdedup_rcons l b :
  size (fdedup (rcons l b)) = (size (fdedup l) + (b \notin l))%N.
Proof.
by rewrite -cats1 fdedup_cat size_cat /=; case: (b \in l); rewrite /= ?addn0 ?addn1.
Qed.

Lemma index_fdedup l1 l2 j :
  j \notin l1 -> index j (fdedup (l1 ++ j :: l2)) = size (fdedup l1).
Proof.
move=> jl; rewrite fdedup_cat index_cat mem_fdedup (negbTE jl) /= jl /=.
by rewrite eqxx addn0.
Qed.

End Dedup.

(* ------------------------------------------------------------------ *)
(* An archive order from a duplicate-free list: the list, then the rest.  *)
Section SeqOrder.
Variable n : nat.
Variable l : seq 'I_n.
Hypothesis l_uniq : uniq l.

Definition lfull : seq 'I_n := l ++ [seq x <- enum 'I_n | x \notin l].

Lemma lfull_uniq : uniq lfull.
Proof.
rewrite cat_uniq l_uniq filter_uniq ?enum_uniq // andbT /=.
by apply/hasPn => x; rewrite mem_filter => /andP [].
Qed.

Lemma lfull_mem j : j \in lfull.
Proof. by rewrite mem_cat mem_filter mem_enum andbT orbN. Qed.

Lemma lfull_size : size lfull = n.
Proof.
have p : perm_eq lfull (enum 'I_n).
  apply: uniq_perm; [exact: lfull_uniq | exact: enum_uniq |].
  by move=> x; rewrite lfull_mem mem_enum.
by rewrite (perm_size p) size_enum_ord.
Qed.

Definition lpi (t : 'I_n) : 'I_n := nth t lfull t.

Lemma lpi_inj : injective lpi.
Proof.
move=> t1 t2; rewrite /lpi.
have l1 : (t1 < size lfull)%N by rewrite lfull_size.
have l2 : (t2 < size lfull)%N by rewrite lfull_size.
rewrite [nth t2 _ _](set_nth_default t1) // => e; apply: val_inj => /=.
by apply/eqP; rewrite -(nth_uniq t1 l1 l2 lfull_uniq) e.
Qed.

Lemma lindex_lt j : (index j lfull < n)%N.
Proof. by rewrite -{2}lfull_size index_mem lfull_mem. Qed.

Lemma lpi_index j : lpi (Ordinal (lindex_lt j)) = j.
Proof.
rewrite /lpi /= (set_nth_default j) ?nth_index ?lfull_mem //.
by rewrite lfull_size lindex_lt.
Qed.

Lemma invF_lpi j : invF lpi_inj j = Ordinal (lindex_lt j).
Proof. by rewrite -{1}(lpi_index j) invF_f. Qed.

Lemma lfull_index_prefix j : j \in l -> index j lfull = index j l.
Proof. by move=> jl; rewrite /lfull index_cat jl. Qed.

End SeqOrder.

(* ------------------------------------------------------------------ *)
(* The run with repeats.                                                *)
Section Repeats.
Variables n kappa ell : nat.
Hypothesis ell_pos : (0 < ell)%N.
Variables TY TU : finType.

(* Any adaptive policy: next block from (y, u, flags so far); flag = true
   means "overflow remains".  No premise. *)
Variable policy : TY -> TU -> seq bool -> 'I_n.

(* Net size freed when block b is archived for the first time. *)
Definition fsize (jstar b : 'I_n) : nat := if b == jstar then (kappa * ell)%N else ell.

(* Archive the chosen block (freeing its size unless it is already archived),
   observe "freed < L", stop as soon as the flag clears. *)
Fixpoint runr (y : TY) (u : TU) (jstar : 'I_n) (fuel : nat) (flags : seq bool)
    (arch : seq 'I_n) (freed : nat) : seq 'I_n :=
  match fuel with
  | 0 => [::]
  | f.+1 =>
      let b := policy y u flags in
      let freed' := if b \in arch then freed else (freed + fsize jstar b)%N in
      let over := (freed' < kappa * ell)%N in
      b :: (if over then runr y u jstar f (rcons flags over) (rcons arch b) freed' else [::])
  end.

(* The steps of a run of at most F archive actions. *)
Definition archived_rep (F : nat) y u jstar := runr y u jstar F [::] [::] 0.

(* Steps that archive a load-bearing block, repeats included. *)
Definition Zrep (F : nat) y u jstar : nat :=
  count (fun b => b != jstar) (archived_rep F y u jstar).

Variable F : nat.
Hypothesis kappa_le_F : (kappa <= F)%N.
Hypothesis kappa_ge1 : (1 <= kappa)%N.

(* The fixed sequence along the all-"over" history and its first t steps. *)
Definition sq y u (t : nat) : 'I_n := policy y u (nseq t true).
Definition pref y u (t : nat) : seq 'I_n := [seq sq y u s | s <- iota 0 t].

Lemma pref_rcons y u t : pref y u t.+1 = rcons (pref y u t) (sq y u t).
Proof. by rewrite /pref -addn1 iotaD map_cat cats1. Qed.

Lemma size_pref y u t : size (pref y u t) = t.
Proof. by rewrite size_map size_iota. Qed.

Lemma pref_split y u t f :
  pref y u (t + f.+1) = pref y u t ++ sq y u t :: [seq sq y u s | s <- iota t.+1 f].
Proof. by rewrite /pref iotaD map_cat. Qed.

(* The order: the sequence without its repeats, then the blocks it never names. *)
Definition pi_rep y u : 'I_n -> 'I_n := lpi (fdedup (pref y u F)).
Definition pi_rep_inj y u : injective (pi_rep y u) := lpi_inj (fdedup_uniq (pref y u F)).

Lemma run_ge y u j t f :
  (t + f = F)%N -> j \notin pref y u t -> (size (fdedup (pref y u t)) < kappa)%N ->
  (minn (index j (lfull (fdedup (pref y u F)))) kappa
     <= t + count (fun b => b != j)
              (runr y u j f (nseq t true) (pref y u t) (size (fdedup (pref y u t)) * ell)))%N.
Proof.
elim: f t => [|f IH] t tf jt st.
  rewrite addn0 in tf; rewrite addn0 tf; exact: leq_trans (geq_minr _ _) kappa_le_F.
rewrite /= -/(sq y u t).
case: (sq y u t =P j) => [bj|bj].
  have bn : (sq y u t \in pref y u t) = false by rewrite bj (negbTE jt).
  rewrite bn /fsize bj eqxx ltnNge leq_addl /= !addn0.
  apply: leq_trans (geq_minl _ _) _.
  have jF : j \in fdedup (pref y u F).
    by rewrite mem_fdedup -tf pref_split bj mem_cat in_cons eqxx orbT.
  rewrite lfull_index_prefix // -tf pref_split bj index_fdedup //.
  by apply: leq_trans (size_fdedup _) _; rewrite size_pref.
have fe : (if sq y u t \in pref y u t then size (fdedup (pref y u t)) * ell
           else size (fdedup (pref y u t)) * ell + fsize j (sq y u t))%N
          = (size (fdedup (pref y u t.+1)) * ell)%N.
  rewrite pref_rcons size_fdedup_rcons /fsize (introF eqP bj).
  by case: (_ \in _); rewrite /= ?addn0 // mulnDl mul1n.
rewrite fe ltn_pmul2r //.
case: ifP => over.
  rewrite over rcons_nseq -pref_rcons /= add1n -addSnnS.
  apply: IH; first by rewrite addSnnS.
    by rewrite pref_rcons mem_rcons in_cons negb_or jt andbT eq_sym; apply/eqP.
  exact: over.
have kt : (kappa <= t.+1)%N.
  move/negbT: over; rewrite -leqNgt => over.
  by apply: leq_trans over _; apply: leq_trans (size_fdedup _) _; rewrite size_pref.
rewrite /= addn0 addn1; exact: leq_trans (geq_minr _ _) kt.
Qed.

(* Pointwise: every run costs at least min(tau - 1, kappa) for the order pi_rep. *)
Theorem Zrep_ge y u j : (minn (invF (@pi_rep_inj y u) j) kappa <= Zrep F y u j)%N.
Proof.
rewrite invF_lpi /= /Zrep /archived_rep.
have := @run_ge y u j 0 F (add0n F) (negbT (in_nil j)) kappa_ge1.
by rewrite mul0n add0n.
Qed.

(* Hence E[Zrep] obeys the bound of part (B), for every policy. *)
Theorem repeat_lower_bound (pJY : 'I_n -> TY -> R) (pU : TU -> R) :
  is_joint pJY -> (forall j, marg1 pJY j = / INR n) -> is_dist pU ->
  (kappa.*2 < n)%N ->
  INR kappa * Rmax 0 (1 - (MI pJY + 1) / nu n kappa)
    <= \sum_j \sum_y \sum_u pJY j y * pU u * INR (Zrep F y u j).
Proof.
move=> pj ju pu kn.
apply: (Rle_trans _ _ _ (EZ_lower_bound pj ju pu kappa_ge1 kn (@pi_rep_inj))).
apply: leR_sum => j _; apply: leR_sum => y _; apply: leR_sum => u _.
apply: Rmult_le_compat_l; first by apply: Rmult_le_pos; [exact: pj.1 | exact: pu.1].
by apply: le_INR; apply/leP; exact: Zrep_ge.
Qed.

End Repeats.
