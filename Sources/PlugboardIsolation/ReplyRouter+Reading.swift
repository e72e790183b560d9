import Dispatch
import PlugboardCore

/// The reading of a router's channel: one reader at a time (a waiting
/// caller, or the reader thread for suspended requests), each reply put in
/// its request's slot, the reading handed on when the reader leaves.
extension ReplyRouter {
    func reply(to sequence: UInt64, _ slot: Slot, until deadline: ContinuousClock.Instant) throws(Failure) -> FrameChannel.Frame {
        while true {
            let (exchanged, seen) = reading.compareExchange(expected: Reading.nobody.rawValue, desired: Reading.someone.rawValue, ordering: .sequentiallyConsistent)
            if exchanged { return try read(for: sequence, slot, until: deadline) }
            // Nobody will read again: it fails now, not at its deadline.
            if seen == Reading.closed.rawValue || isBroken.load(ordering: .sequentiallyConsistent) {
                if giveUp(slot, sequence) { throw brokenFailure }
                return try take(settle(slot, sequence), slot)
            }
            if !slot.wake.wait(until: deadline) {
                // Its deadline. Nothing came: it leaves. Something is coming: settled first.
                if giveUp(slot, sequence) { throw isBroken.load(ordering: .sequentiallyConsistent) ? brokenFailure : .timedOut }
                return try take(settle(slot, sequence), slot)
            }
            switch Self.state(of: slot.word.load(ordering: .sequentiallyConsistent)) {
            case .delivered?:
                return try take(.outcome(slot.outcome ?? .failed(brokenFailure)), slot)
            case .turn?:
                // The reading is ours (the one leaving kept it held for us).
                slot.word.store(Self.word(sequence, .waiting), ordering: .sequentiallyConsistent)
                parked.add(1, ordering: .sequentiallyConsistent)
                return try read(for: sequence, slot, until: deadline)
            default:
                continue
            }
        }
    }

    /// Reads frames for everyone until this caller's reply comes (or its
    /// deadline passes, or the channel breaks); the caller holds the reading.
    func read(for sequence: UInt64, _ slot: Slot, until deadline: ContinuousClock.Instant) throws(Failure) -> FrameChannel.Frame {
        // Its reply may have come while nobody read: the last reader put it
        // in the slot, then let the reading go.
        if Self.state(of: slot.word.load(ordering: .sequentiallyConsistent)) != .waiting || isBroken.load(ordering: .sequentiallyConsistent) {
            // Its slot first: the reading it leaves must not be handed to itself.
            let gaveUp = giveUp(slot, sequence)
            leaveReading()
            guard gaveUp else { return try take(settle(slot, sequence), slot) }
            throw brokenFailure
        }
        while true {
            let frame: FrameChannel.Frame
            do {
                // Suspended requests' deadlines are kept by whoever reads.
                frame = try channel.receive(until: suspended.load(ordering: .relaxed) > 0 ? min(deadline, .now + Self.tick) : deadline)
            } catch {
                if case .timedOut = error, ContinuousClock.now < deadline {
                    expireSuspended()
                    continue
                }
                switch error {
                case .timedOut: break
                case .closed: breakChannel(.closed)
                case let .malformed(reason): breakChannel(.malformed(reason))
                }
                release(slot, sequence, from: .waiting)
                leaveReading()
                throw error.routerFailure
            }
            if suspended.load(ordering: .relaxed) > 0 { expireSuspended() }
            if frame.sequence == sequence {
                release(slot, sequence, from: .waiting)
                leaveReading()
                return frame
            }
            // A reply no call waits for is dropped: its call gave up at its
            // deadline (the child is being killed for it), or the child made it up.
            deliver(.frame(frame), sequence: frame.sequence)
        }
    }

    /// Puts `outcome` in the slot of `sequence` and wakes its owner, if it
    /// still waits (or is still sending).
    func deliver(_ outcome: Outcome, sequence: UInt64) {
        guard let slot = slot(for: sequence) else { return }
        deliver(outcome, to: slot, sequence: sequence)
    }

    func deliver(_ outcome: Outcome, to slot: Slot, sequence: UInt64) {
        // From the state seen, again if it changed: its owner may move it
        // from sending to waiting between two fixed guesses, and both miss.
        let sending = Self.word(sequence, .sending), waiting = Self.word(sequence, .waiting), suspended = Self.word(sequence, .suspended)
        var seen = slot.word.load(ordering: .sequentiallyConsistent)
        while seen == sending || seen == waiting || seen == suspended {
            let (exchanged, original) = slot.word.compareExchange(expected: seen, desired: Self.word(sequence, .delivering), ordering: .sequentiallyConsistent)
            if exchanged {
                if seen == suspended {
                    resumeSuspended(slot, with: outcome)
                    return
                }
                if seen == waiting { parked.subtract(1, ordering: .sequentiallyConsistent) }
                slot.outcome = outcome
                slot.word.store(Self.word(sequence, .delivered), ordering: .sequentiallyConsistent)
                slot.wake.signal()
                return
            }
            seen = original
        }
    }

    /// This caller stops reading: it hands the reading to a waiting caller,
    /// or lets it go and looks once more (a caller may have started waiting
    /// while it still read), or closes the channel when a close asked for it.
    func leaveReading() {
        while true {
            if closeRequested.load(ordering: .sequentiallyConsistent) {
                reading.store(Reading.closed.rawValue, ordering: .sequentiallyConsistent)
                channel.close()
                return
            }
            if handTurn() { return }
            // Only suspended requests wait: the reader thread reads for them.
            if suspended.load(ordering: .sequentiallyConsistent) > 0 {
                readerTurn.signal()
                return
            }
            reading.store(Reading.nobody.rawValue, ordering: .sequentiallyConsistent)
            guard anyWaiting() || closeRequested.load(ordering: .sequentiallyConsistent),
                  reading.compareExchange(expected: Reading.nobody.rawValue, desired: Reading.someone.rawValue, ordering: .sequentiallyConsistent).exchanged
            else { return }
        }
    }

    /// Gives the reading (held) to one waiting caller.
    func handTurn() -> Bool {
        guard parked.load(ordering: .sequentiallyConsistent) > 0 else { return false }
        for slot in slots {
            let word = slot.word.load(ordering: .sequentiallyConsistent)
            guard Self.state(of: word) == .waiting else { continue }
            if slot.word.compareExchange(expected: word, desired: Self.word(word >> Self.stateBits, .turn), ordering: .sequentiallyConsistent).exchanged {
                parked.subtract(1, ordering: .sequentiallyConsistent)
                slot.wake.signal()
                return true
            }
        }
        return false
    }

    func anyWaiting() -> Bool {
        parked.load(ordering: .sequentiallyConsistent) > 0 || suspended.load(ordering: .sequentiallyConsistent) > 0
    }
}
